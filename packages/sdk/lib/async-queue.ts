import { Wakeup } from './wakeup';

/**
 * A one-consumer queue that is also an async iterable: producers push from
 * callbacks (store signals, timers, a request reader), and a stream handler
 * yields what arrives. `end` finishes the iteration after the queued items;
 * `fail` finishes it by throwing.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private done = false;
  private failure: { error: unknown } | undefined;
  private readonly wakeup = new Wakeup();

  /** Items pushed and not yet taken. */
  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.done) return;
    this.items.push(item);
    this.wakeup.notify();
  }

  end(): void {
    this.done = true;
    this.wakeup.notify();
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.failure = { error };
    this.done = true;
    this.wakeup.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure.error;
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.done) return;
      await this.wakeup.wait();
    }
  }
}
