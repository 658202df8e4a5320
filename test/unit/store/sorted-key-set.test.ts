import { array, assert, boolean, constantFrom, property, string, tuple } from 'fast-check';
import { SortedKeySet } from '../../../src/store/memory/sorted-key-set';

/** Operations on the set: add (true) or delete (false) a key drawn from a small alphabet, so keys repeat. */
const operations = array(tuple(boolean(), string({ unit: constantFrom('a', 'b', 'c', 'é', '😀'), maxLength: 4 })), { maxLength: 3_000 });

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

describe('SortedKeySet', () => {
  it('holds the keys of a Set, in code-unit order, after any adds and deletes', () => {
    assert(
      property(operations, (ops) => {
        const keys = new SortedKeySet();
        const reference = new Set<string>();
        const deletions: boolean[][] = [];
        for (const [isAdd, key] of ops) {
          if (isAdd) [keys, reference].forEach((set) => set.add(key));
          else deletions.push([keys.delete(key), reference.delete(key)]);
        }
        expect(deletions.filter(([got, expected]) => got !== expected)).toEqual([]);
        const sorted = [...reference].toSorted(byCodeUnits);
        expect([...keys.after()]).toEqual(sorted);
        expect(keys.size).toBe(reference.size);
        const middle = sorted[sorted.length >> 1] ?? '';
        expect([...keys.after(middle)]).toEqual(sorted.filter((key) => key > middle));
        expect([...keys.before()]).toEqual(sorted.toReversed());
        expect([...keys.before(middle)]).toEqual(sorted.filter((key) => key < middle).toReversed());
        // Bounds that are not keys: between two keys, and beyond either end.
        expect([...keys.before(`${middle}\u0000`)]).toEqual(sorted.filter((key) => key <= middle).toReversed());
        expect([...keys.before('\uffff')]).toEqual(sorted.toReversed());
        expect([middle, `${middle}\u0000`].map((key) => keys.has(key))).toEqual([reference.has(middle), reference.has(`${middle}\u0000`)]);
      }),
      { seed: 8, numRuns: 200 },
    );
  });

  it('keeps its order across many chunks', () => {
    const keys = new SortedKeySet();
    const ids = Array.from({ length: 5_000 }, (_, i) => `w-${String((i * 7_919) % 5_000).padStart(5, '0')}`);
    for (const id of ids) keys.add(id);
    for (const id of ids.filter((_, i) => i % 3 === 0)) keys.delete(id);
    const expected = ids.filter((_, i) => i % 3 !== 0).toSorted(byCodeUnits);
    expect([...keys.after()]).toEqual(expected);
    expect([...keys.after(expected[1_000])]).toEqual(expected.slice(1_001));
    expect([...keys.before(expected[1_000])]).toEqual(expected.slice(0, 1_000).toReversed());
    expect([...keys.before()]).toEqual(expected.toReversed());
  });

  it('pages through the keys, examining at most the budget and always at least one', () => {
    const keys = new SortedKeySet();
    for (const key of ['e', 'a', 'd', 'c', 'b']) keys.add(key);
    const vowels = (key: string) => (key === 'a' || key === 'e' ? key.toUpperCase() : undefined);
    expect(keys.page(undefined, 10, 3, vowels)).toEqual({ items: ['A'], nextAfter: 'c' });
    expect(keys.page('c', 10, 3, vowels)).toEqual({ items: ['E'] });
    expect(keys.page(undefined, 2, 10, (key) => key)).toEqual({ items: ['a', 'b'], nextAfter: 'b' });
    expect(keys.page('d', 2, 10, (key) => key)).toEqual({ items: ['e'] });
    expect(keys.page('b', 10, 0, vowels)).toEqual({ items: [], nextAfter: 'c' });
  });
});
