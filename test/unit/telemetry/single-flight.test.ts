import { singleFlight } from '../../../src/telemetry/single-flight';

/** A read the test answers by hand, counting how often it started. */
function manualRead() {
  const pending: { resolve(value: number): void; reject(error: Error): void }[] = [];
  const read = () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  return { read, pending };
}

describe('singleFlight', () => {
  it('gives the calls made while a read runs that read answer, without starting another', async () => {
    const { read, pending } = manualRead();
    const shared = singleFlight(read);
    const first = shared();
    const second = shared();
    expect(pending).toHaveLength(1);
    pending[0]!.resolve(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
  });

  it('starts a new read once the last one has answered', async () => {
    const { read, pending } = manualRead();
    const shared = singleFlight(read);
    const first = shared();
    pending[0]!.resolve(1);
    await first;
    const second = shared();
    expect(pending).toHaveLength(2);
    pending[1]!.resolve(2);
    expect(await second).toBe(2);
  });

  it('starts a new read after one failed, and hands the failure to every caller that shared it', async () => {
    const { read, pending } = manualRead();
    const shared = singleFlight(read);
    const calls = [shared(), shared()];
    pending[0]!.reject(new Error('store unreachable'));
    for (const call of calls) await expect(call).rejects.toThrow('store unreachable');
    void shared();
    expect(pending).toHaveLength(2);
  });
});
