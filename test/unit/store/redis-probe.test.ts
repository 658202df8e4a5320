import { RedisProbe } from '../../../src/store/redis/redis-probe';

/** A question the test answers when it wants. */
function pendingAnswer(): { promise: Promise<unknown>; answer(): void; fail(): void } {
  let answer!: () => void;
  let fail!: () => void;
  const promise = new Promise<unknown>((resolve, reject) => {
    answer = () => resolve('PONG');
    fail = () => reject(new Error('Command timed out'));
  });
  return { promise, answer, fail };
}

describe('the Redis probe', () => {
  it('reports an answer in time as answering', async () => {
    const reports: boolean[] = [];
    const probe = new RedisProbe(
      () => Promise.resolve(1),
      { intervalMs: 1_000, timeoutMs: 1_000 },
      (ok) => reports.push(ok),
    );
    expect(await probe.runOnce()).toBe(true);
    expect(reports).toEqual([true]);
  });

  it('reports a failure as not answering', async () => {
    const reports: boolean[] = [];
    const probe = new RedisProbe(
      () => Promise.reject(new Error('Connection is closed.')),
      { intervalMs: 1_000, timeoutMs: 1_000 },
      (ok) => reports.push(ok),
    );
    expect(await probe.runOnce()).toBe(false);
    expect(reports).toEqual([false]);
  });

  it('reports silence past the timeout at once, then the late answer when it comes', async () => {
    const question = pendingAnswer();
    const reports: boolean[] = [];
    let timedOut!: () => void;
    const silent = new Promise<void>((resolve) => (timedOut = resolve));
    const probe = new RedisProbe(
      () => question.promise,
      { intervalMs: 1_000, timeoutMs: 5 },
      (ok) => {
        reports.push(ok);
        if (!ok) timedOut();
      },
    );
    const probing = probe.runOnce();
    await silent;
    expect(reports).toEqual([false]);
    question.answer();
    expect(await probing).toBe(true);
    expect(reports).toEqual([false, true]);
  });

  it('keeps reporting not answering when the late answer is a failure', async () => {
    const question = pendingAnswer();
    const reports: boolean[] = [];
    const probe = new RedisProbe(
      () => question.promise,
      { intervalMs: 1_000, timeoutMs: 5 },
      (ok) => {
        reports.push(ok);
        if (!ok && reports.length === 1) question.fail();
      },
    );
    expect(await probe.runOnce()).toBe(false);
    expect(reports).toEqual([false, false]);
  });
});
