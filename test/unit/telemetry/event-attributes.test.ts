import { eventAttributes } from '../../../src/telemetry/event-attributes';

describe('eventAttributes', () => {
  it('keeps scalars under their data keys and flattens one level of nesting into dotted keys', () => {
    expect(
      eventAttributes({
        job_id: 'j1',
        attempt: 2,
        dead_letter: true,
        error: { code: 'Boom', message: 'it broke', retryable: false },
      }),
    ).toEqual({ job_id: 'j1', attempt: 2, dead_letter: true, 'error.code': 'Boom', 'error.message': 'it broke', 'error.retryable': false });
  });

  it('keeps arrays and deeper objects as their JSON text, and leaves nulls out', () => {
    expect(eventAttributes({ queues: ['a', 'b'], error: { details: { deep: [1] }, code: null }, gone: null })).toEqual({
      queues: '["a","b"]',
      'error.details': '{"deep":[1]}',
    });
  });
});
