/**
 * A binary min-heap ordered by `at`. Used for everything that happens at a
 * time (promotions, expiries, lease deadlines). Entries are never removed
 * from the middle: callers validate an entry when it surfaces and skip it if
 * it went stale, which keeps every change O(log n); `retain` sweeps stale
 * entries out when they come to outnumber live ones.
 */
export class MinHeap<T extends { at: number }> {
  private items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.at <= item.at) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    this.siftDown(0);
    return top;
  }

  /** Keeps only the entries `keep` accepts: O(n), for sweeps. */
  retain(keep: (item: T) => boolean): void {
    this.items = this.items.filter(keep);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Every entry, in no particular order. */
  values(): IterableIterator<T> {
    return this.items.values();
  }

  private siftDown(start: number): void {
    const items = this.items;
    const item = items[start]!;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]!.at < items[left]!.at ? right : left;
      if (items[child]!.at >= item.at) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = item;
  }
}
