/** A FIFO over an array with a moving head, compacted as it drains. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get isEmpty(): boolean {
    return this.head >= this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.isEmpty) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * The ready jobs of one queue: highest priority first, FIFO within a
 * priority (ojs-core 5.2). Entries that went stale (the job was cancelled or
 * claimed meanwhile) are skipped when they surface, via `isLive`.
 */
export class PriorityFifo<T> {
  private readonly byPriority = new Map<number, Fifo<T>>();
  /** Priorities that have a FIFO, highest first. */
  private priorities: number[] = [];

  push(priority: number, item: T): void {
    let fifo = this.byPriority.get(priority);
    if (fifo === undefined) {
      fifo = new Fifo<T>();
      this.byPriority.set(priority, fifo);
      this.priorities = [...this.priorities, priority].toSorted((a, b) => b - a);
    }
    fifo.push(item);
  }

  /** Removes and returns the first live item, dropping stale ones on the way. */
  shift(isLive: (item: T) => boolean): T | undefined {
    for (const priority of this.priorities) {
      const fifo = this.byPriority.get(priority)!;
      for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) {
        if (isLive(item)) return item;
      }
    }
    return undefined;
  }
}
