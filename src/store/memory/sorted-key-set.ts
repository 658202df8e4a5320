import type { Page } from '../../domain/paging';

/** Chunks split beyond twice this many keys. */
const CHUNK_KEYS = 512;

/**
 * A set of strings kept in code-unit order (JavaScript's `<`), for listings
 * paged by key. The keys sit in sorted chunks of at most 2 x CHUNK_KEYS, so
 * adding or removing a key costs O(log n + CHUNK_KEYS + n / CHUNK_KEYS)
 * (a short splice in one chunk, rarely one in the chunk list), and a page
 * costs O(log n) to find its start plus the keys it examines: no listing
 * sorts or copies every key.
 */
export class SortedKeySet {
  private readonly chunks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return;
    }
    const last = this.chunks.length - 1;
    // Most keys arrive in order (listing keys start with a time): appending needs no search.
    const c = key > this.chunks[last]!.at(-1)! ? last : Math.min(this.chunkIndex(key), last);
    const chunk = this.chunks[c]!;
    const i = c === last && key > chunk.at(-1)! ? chunk.length : firstAtLeast(chunk, key);
    if (chunk[i] === key) return;
    // push and shift (in delete) are the common cases, and cheaper than a splice: V8 trims an array's front in place.
    if (i === chunk.length) chunk.push(key);
    else chunk.splice(i, 0, key);
    this.count += 1;
    if (chunk.length > 2 * CHUNK_KEYS) this.chunks.splice(c, 1, chunk.slice(0, CHUNK_KEYS), chunk.slice(CHUNK_KEYS));
  }

  delete(key: string): boolean {
    // Most keys leave first in line (the oldest job is claimed, finished or pruned first): that needs no search.
    const isFirst = this.chunks[0]?.[0] === key;
    const c = isFirst ? 0 : this.chunkIndex(key);
    const chunk = this.chunks[c];
    if (chunk === undefined) return false;
    const i = isFirst ? 0 : firstAtLeast(chunk, key);
    if (chunk[i] !== key) return false;
    if (i === 0) chunk.shift();
    else chunk.splice(i, 1);
    this.count -= 1;
    if (chunk.length === 0) this.chunks.splice(c, 1);
    return true;
  }

  /** The keys after `after` (exclusive; all of them without it), in order. */
  *after(after?: string): IterableIterator<string> {
    let c = after === undefined ? 0 : this.chunkIndex(after);
    let i = after === undefined ? 0 : firstAbove(this.chunks[c] ?? [], after);
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** The keys before `before` (exclusive; all of them without it), in reverse order. */
  *before(before?: string): IterableIterator<string> {
    let c = before === undefined ? this.chunks.length - 1 : Math.min(this.chunkIndex(before), this.chunks.length - 1);
    let i = before === undefined ? (this.chunks[c]?.length ?? 0) - 1 : firstAtLeast(this.chunks[c] ?? [], before) - 1;
    for (; c >= 0; c--, i = (this.chunks[c]?.length ?? 0) - 1) {
      const chunk = this.chunks[c]!;
      for (; i >= 0; i--) yield chunk[i]!;
    }
  }

  /** Whether `key` is in the set. */
  has(key: string): boolean {
    const chunk = this.chunks[this.chunkIndex(key)];
    return chunk !== undefined && chunk[firstAtLeast(chunk, key)] === key;
  }

  /**
   * One page of `pick(key)` results for the keys after `after`: at most
   * `limit` of them, examining at most `budget` keys (keys `pick` maps to
   * undefined are examined and left out). `nextAfter` is set when keys remain.
   */
  page<T>(after: string | undefined, limit: number, budget: number, pick: (key: string) => T | undefined): Page<T> {
    const items: T[] = [];
    let examined = 0;
    let last: string | undefined;
    for (const key of this.after(after)) {
      if (last !== undefined && (items.length >= limit || examined >= budget)) return { items, nextAfter: last };
      examined += 1;
      last = key;
      const item = pick(key);
      if (item !== undefined) items.push(item);
    }
    return { items };
  }

  /** The first chunk whose last key is at least `key` (chunks.length when none is). */
  private chunkIndex(key: string): number {
    let [low, high] = [0, this.chunks.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.chunks[mid]!.at(-1)! < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** The index of the first key not below `key` in a sorted chunk. */
function firstAtLeast(chunk: readonly string[], key: string): number {
  let [low, high] = [0, chunk.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (chunk[mid]! < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The index of the first key above `key` in a sorted chunk. */
function firstAbove(chunk: readonly string[], key: string): number {
  let [low, high] = [0, chunk.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (chunk[mid]! <= key) low = mid + 1;
    else high = mid;
  }
  return low;
}
