import { within } from './deadline';

/**
 * Waits for the delivery of particular jobs, by key (a job's number or
 * id): a delivery nobody waits for (a job delivered again after its lease
 * was lost, or one whose wait already failed) wakes no one and is counted
 * in `unexpected`.
 */
export class Arrivals<K> {
  unexpected = 0;
  private readonly waiting = new Map<K, () => void>();

  /** Resolves when `key` arrives; fails with a DeadlineExceeded naming `what` after `ms`. */
  async expect(key: K, what: string, ms: number): Promise<void> {
    const arrived = new Promise<void>((resolve) => this.waiting.set(key, resolve));
    try {
      await within(what, ms, arrived);
    } finally {
      this.waiting.delete(key);
    }
  }

  /** A delivery of `key`: wakes its waiter, if any. */
  arrived(key: K): void {
    const wake = this.waiting.get(key);
    if (wake === undefined) {
      this.unexpected += 1;
      return;
    }
    this.waiting.delete(key);
    wake();
  }
}
