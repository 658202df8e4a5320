import { performance } from 'node:perf_hooks';
import { within } from './deadline';

/**
 * Waits for the delivery of particular jobs, by key (a job's number or
 * id): a delivery nobody waits for (a job delivered again after its lease
 * was lost, or one whose wait already failed) wakes no one and is counted
 * in `unexpected`. Each arrival is stamped as it is reported, so that what
 * the worker does next in the same turn (acknowledging, say) is not
 * counted in its time.
 */
export class Arrivals<K> {
  unexpected = 0;
  private readonly waiting = new Map<K, (at: number) => void>();

  /** Resolves with when `key` arrived (performance.now()); fails with a DeadlineExceeded naming `what` after `ms`. */
  async expect(key: K, what: string, ms: number): Promise<number> {
    const arrived = new Promise<number>((resolve) => this.waiting.set(key, resolve));
    try {
      return await within(what, ms, arrived);
    } finally {
      this.waiting.delete(key);
    }
  }

  /** A delivery of `key`: wakes its waiter, if any, with the time now. */
  arrived(key: K): void {
    const wake = this.waiting.get(key);
    if (wake === undefined) {
      this.unexpected += 1;
      return;
    }
    this.waiting.delete(key);
    wake(performance.now());
  }
}

/**
 * When a sample of latency ends: the later of its call's answer (stamped
 * as the answer resolves) and its job's arrival (stamped by `arrived`).
 */
export async function bothArrived(answered: Promise<unknown>, delivered: Promise<number>): Promise<number> {
  const [answeredAt, deliveredAt] = await Promise.all([answered.then(() => performance.now()), delivered]);
  return Math.max(answeredAt, deliveredAt);
}
