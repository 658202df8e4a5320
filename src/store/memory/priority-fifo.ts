/** A FIFO over an array with a moving head, compacted as it drains. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  retain(keep: (item: T) => boolean): void {
    this.items = this.items.slice(this.head).filter(keep);
    this.head = 0;
  }

  values(): IterableIterator<T> {
    return this.items.slice(this.head).values();
  }

  /** The items after `start` by `position` (which increases along the FIFO), in order. */
  *after(start: number, position: (item: T) => number): IterableIterator<T> {
    for (let i = this.firstAbove(start, position); i < this.items.length; i++) yield this.items[i]!;
  }

  /** The items before `start` by `position`, in reverse order. */
  *before(start: number, position: (item: T) => number): IterableIterator<T> {
    for (let i = this.firstAbove(start - 1, position) - 1; i >= this.head; i--) yield this.items[i]!;
  }

  /** The index of the first item whose position is above `start` (items.length when none is). */
  private firstAbove(start: number, position: (item: T) => number): number {
    let [low, high] = [this.head, this.items.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (position(this.items[mid]!) <= start) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * The ready jobs of one queue: highest priority first, FIFO within a
 * priority (ojs-core 5.2). Entries that went stale (the job was cancelled or
 * claimed meanwhile) are skipped when they surface, via `isLive`, or swept
 * out by `retain`. A priority's FIFO is dropped once it drains.
 */
export class PriorityFifo<T> {
  private readonly byPriority = new Map<number, Fifo<T>>();
  /** Priorities that have a FIFO, highest first. */
  private readonly priorities: number[] = [];
  private count = 0;

  /** Entries held, stale ones included. */
  get size(): number {
    return this.count;
  }

  push(priority: number, item: T): void {
    let fifo = this.byPriority.get(priority);
    if (fifo === undefined) {
      fifo = new Fifo<T>();
      this.byPriority.set(priority, fifo);
      this.priorities.splice(insertionIndex(this.priorities, priority), 0, priority);
    }
    fifo.push(item);
    this.count += 1;
  }

  /** The first live item, left in place; stale ones before it are dropped. */
  peek(isLive: (item: T) => boolean): T | undefined {
    for (;;) {
      const priority = this.priorities[0];
      if (priority === undefined) return undefined;
      const fifo = this.byPriority.get(priority)!;
      for (let item = fifo.peek(); item !== undefined; item = fifo.peek()) {
        if (isLive(item)) return item;
        fifo.shift();
        this.count -= 1;
      }
      this.byPriority.delete(priority);
      this.priorities.shift();
    }
  }

  /** Removes and returns the first live item, dropping stale ones on the way. */
  shift(isLive: (item: T) => boolean): T | undefined {
    const item = this.peek(isLive);
    if (item === undefined) return undefined;
    this.byPriority.get(this.priorities[0]!)!.shift();
    this.count -= 1;
    return item;
  }

  /** Keeps only the items `keep` accepts: O(n), for sweeps. */
  retain(keep: (item: T) => boolean): void {
    this.count = 0;
    for (const [priority, fifo] of this.byPriority) {
      fifo.retain(keep);
      this.count += fifo.size;
      if (fifo.size > 0) continue;
      this.byPriority.delete(priority);
      this.priorities.splice(this.priorities.indexOf(priority), 1);
    }
  }

  /** Every item with its priority, in delivery order. */
  *entries(): IterableIterator<[number, T]> {
    for (const priority of this.priorities) {
      for (const item of this.byPriority.get(priority)!.values()) yield [priority, item];
    }
  }

  /**
   * The items after `start`, in delivery order, by `position`: a number
   * that increases along delivery order (such as a run rank). Stale items
   * are included: the caller skips them. O(log n) to find the start.
   */
  *after(start: number, position: (item: T) => number): IterableIterator<T> {
    for (const priority of this.priorities) yield* this.byPriority.get(priority)!.after(start, position);
  }

  /** The items before `start` by `position`, in reverse delivery order. */
  *before(start: number, position: (item: T) => number): IterableIterator<T> {
    for (let p = this.priorities.length - 1; p >= 0; p--) yield* this.byPriority.get(this.priorities[p]!)!.before(start, position);
  }
}

/** Where `priority` goes in `priorities` (highest first), by binary search. */
function insertionIndex(priorities: readonly number[], priority: number): number {
  let [low, high] = [0, priorities.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (priorities[mid]! > priority) low = mid + 1;
    else high = mid;
  }
  return low;
}
