import { HandlerCode } from '../../../packages/sdk/gen/ojs/server/v1/job';
import { Backoff } from '../../../packages/sdk/src/backoff';
import { pid1Warning } from '../../../packages/sdk/src/container';
import { failureForRefusedAck, failureForRefusedFail, JobFailure, sdkJobError, toJobError } from '../../../packages/sdk/src/errors';
import { compose, type Middleware } from '../../../packages/sdk/src/middleware';
import { resolveWorkerOptions } from '../../../packages/sdk/src/worker-options';

describe('SDK building blocks', () => {
  it('chains middleware outermost first, each able to change the input and the result', async () => {
    const trace: string[] = [];
    const layer =
      (name: string): Middleware<number, number> =>
      async (n, next) => {
        trace.push(`${name}>${n}`);
        const out = await next(n + 1);
        trace.push(`${name}<${out}`);
        return out * 10;
      };
    expect(await compose([layer('a'), layer('b')], async (n) => n)(1)).toBe(300);
    expect(trace).toEqual(['a>1', 'b>2', 'b<3', 'a<30']);
  });

  it('backs off exponentially with jitter, within the cap, and starts over after a reset', () => {
    const high = new Backoff(100, 1_000, () => 1);
    expect([high.next(), high.next(), high.next(), high.next(), high.next()]).toEqual([100, 200, 400, 800, 1_000]);
    high.reset();
    expect(high.next()).toBe(100);
    expect(new Backoff(100, 1_000, () => 0).next()).toBe(50);
  });

  it('turns what a handler threw into a structured error', () => {
    const failure = toJobError(new JobFailure('declined', { type: 'payment.declined', code: 'discard', details: { card: 'x' } }));
    expect(failure).toMatchObject({
      type: 'payment.declined',
      message: 'declined',
      code: HandlerCode.HANDLER_CODE_DISCARD,
      details: { card: 'x' },
    });
    expect(failure.backtrace[0]).toMatch(/^at /);
    expect(toJobError(new TypeError('nope'))).toMatchObject({
      type: 'TypeError',
      message: 'nope',
      code: HandlerCode.HANDLER_CODE_UNSPECIFIED,
    });
    expect(toJobError('plain')).toMatchObject({ type: 'Error', message: 'plain' });
  });

  it('fails a job whose result the server refused as too large, and only then', () => {
    const refusal = {
      ok: false,
      code: 'result_too_large',
      message: 'result of job j is 2000000 bytes; at most 1048576 are accepted',
    } as const;
    const failure = failureForRefusedAck(refusal);
    expect(failure).toMatchObject({ type: 'result_too_large', code: HandlerCode.HANDLER_CODE_UNSPECIFIED });
    expect(failure?.message).toMatch(
      /larger than the server accepts \(result of job j is 2000000 bytes.*\); store large results elsewhere/,
    );
    expect(failureForRefusedAck({ ok: true })).toBeUndefined();
    expect(failureForRefusedAck({ ok: false, code: 'invalid_state', message: 'lease not held' })).toBeUndefined();
    expect(failureForRefusedAck({ ok: false, code: 'UNAVAILABLE', message: 'no connection' })).toBeUndefined();
  });

  it('reduces an error report the server refused for its content, keeping what it accepts', () => {
    const report = { ...toJobError(new JobFailure('m'.repeat(5_000), { type: 'card.declined', code: 'discard', details: { big: 'x' } })) };
    const tooLarge = { ok: false, code: 'payload_too_large', message: 'too large' } as const;
    const reduced = failureForRefusedFail(tooLarge, report);
    expect(reduced).toMatchObject({ type: 'card.declined', code: HandlerCode.HANDLER_CODE_DISCARD, backtrace: [], details: undefined });
    expect(reduced?.message).toBe(`${'m'.repeat(1_000)} (the server refused the full error report: too large)`);
    const badType = failureForRefusedFail(
      { ok: false, code: 'invalid_request', message: 'error.type: ...' },
      sdkJobError('t'.repeat(256), 'm'),
    );
    expect(badType?.type).toBe('error_report_refused');
    expect(failureForRefusedFail({ ok: false, code: 'invalid_request', message: '' }, sdkJobError('a\nb', 'm'))?.type).toBe(
      'error_report_refused',
    );
    expect(failureForRefusedFail({ ok: true }, report)).toBeUndefined();
    expect(failureForRefusedFail({ ok: false, code: 'invalid_state', message: 'lease not held' }, report)).toBeUndefined();
  });

  it('warns only when not PID 1 inside a container', () => {
    expect(pid1Warning(1, true)).toBeUndefined();
    expect(pid1Warning(42, false)).toBeUndefined();
    expect(pid1Warning(42, true)).toMatch(/PID 42 inside a container/);
  });

  it('reads its settings from the environment, options winning', () => {
    const env = { OJS_SERVER: 'ojs:9090', OJS_QUEUES: 'a, b', OJS_CONCURRENCY: '4', OJS_SHUTDOWN_GRACE_PERIOD: '40s' };
    expect(resolveWorkerOptions({}, env)).toMatchObject({
      address: 'ojs:9090',
      queues: ['a', 'b'],
      concurrency: 4,
      shutdownGracePeriodMs: 40_000,
    });
    expect(resolveWorkerOptions({ concurrency: 2 }, {})).toMatchObject({
      address: '127.0.0.1:9090',
      queues: ['default'],
      concurrency: 2,
      shutdownGracePeriodMs: 25_000,
    });
    expect(() => resolveWorkerOptions({}, { OJS_SHUTDOWN_GRACE_PERIOD: 'soon' })).toThrow(/OJS_SHUTDOWN_GRACE_PERIOD/);
  });
});
