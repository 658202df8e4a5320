import { HandlerCode } from '../../../gen/ojs/server/v1/job';
import { Backoff } from '../../../sdk/backoff';
import { pid1Warning } from '../../../sdk/container';
import { JobFailure, toJobError } from '../../../sdk/errors';
import { compose, type Middleware } from '../../../sdk/middleware';
import { resolveWorkerOptions } from '../../../sdk/worker-options';

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
