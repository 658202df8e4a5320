import { parseTraceparent } from '../../../src/telemetry/trace-context';

describe('parseTraceparent', () => {
  it('reads the trace id, parent id and flags of a W3C traceparent as a remote span context', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
  });

  it('keeps an unsampled flag, so the SDK can follow the producer', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00')?.traceFlags).toBe(0);
  });

  it('reads the known fields of a later version and ignores what it appends', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next')?.spanId).toBe('00f067aa0ba902b7');
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['not a traceparent', 'hello'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with more fields', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'],
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['upper-case hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['surrounding spaces', ' 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 '],
  ])('ignores a traceparent that is %s', (_, traceparent) => {
    expect(parseTraceparent(traceparent)).toBeUndefined();
  });
});
