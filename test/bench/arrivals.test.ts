import { performance } from 'node:perf_hooks';
import { Arrivals, bothArrived } from '../../bench/arrivals';
import { DeadlineExceeded } from '../../bench/deadline';

/** The worker's own work in the turn it reported an arrival in (setting up its Ack, say): the clock moves on. */
function workFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("the benchmark's arrivals", () => {
  it('stamp a delivery as it is reported, not when its waiter wakes', async () => {
    const arrivals = new Arrivals<string>();
    const answered = Promise.resolve();
    const ending = bothArrived(answered, arrivals.expect('a', 'the delivery of a', 10_000));
    await answered;
    const reported = performance.now();
    arrivals.arrived('a');
    const stamped = performance.now();
    workFor(5);
    const end = await ending;
    expect(end).toBeGreaterThanOrEqual(reported);
    expect(end).toBeLessThanOrEqual(stamped);
  });

  it('end a sample when the later of the answer and the delivery came', async () => {
    const arrivals = new Arrivals<string>();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const ending = bothArrived(answered, arrivals.expect('a', 'the delivery of a', 10_000));
    arrivals.arrived('a');
    workFor(2);
    const answeredAt = performance.now();
    answer();
    expect(await ending).toBeGreaterThanOrEqual(answeredAt);
  });

  it('count a delivery nobody waits for, and fail a wait past its deadline', async () => {
    const arrivals = new Arrivals<string>();
    arrivals.arrived('unknown');
    expect(arrivals.unexpected).toBe(1);
    await expect(arrivals.expect('late', 'the delivery of late', 1)).rejects.toBeInstanceOf(DeadlineExceeded);
    arrivals.arrived('late');
    expect(arrivals.unexpected).toBe(2);
  });
});
