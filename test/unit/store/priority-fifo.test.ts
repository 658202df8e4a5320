import { PriorityFifo } from '../../../src/store/memory/priority-fifo';

describe('PriorityFifo', () => {
  const always = () => true;

  it('serves higher priorities first, FIFO within one', () => {
    const fifo = new PriorityFifo<string>();
    for (const [priority, item] of [
      [0, 'a'],
      [5, 'b'],
      [0, 'c'],
      [-3, 'd'],
      [5, 'e'],
    ] as const)
      fifo.push(priority, item);
    expect(Array.from({ length: 6 }, () => fifo.shift(always))).toEqual(['b', 'e', 'a', 'c', 'd', undefined]);
    expect(fifo.size).toBe(0);
  });

  it('leaves the first live item in place when peeking, dropping stale ones before it', () => {
    const fifo = new PriorityFifo<string>();
    for (const item of ['stale-1', 'stale-2', 'live', 'next']) fifo.push(0, item);
    const isLive = (item: string) => !item.startsWith('stale');
    expect(fifo.peek(isLive)).toBe('live');
    expect(fifo.size).toBe(2);
    expect(fifo.shift(isLive)).toBe('live');
    expect(fifo.shift(isLive)).toBe('next');
  });

  it('sweeps stale items out of every priority', () => {
    const fifo = new PriorityFifo<number>();
    for (let i = 0; i < 3_000; i++) fifo.push(i % 3, i);
    fifo.retain((i) => i % 1_000 === 0);
    expect(fifo.size).toBe(3);
    expect([...fifo.entries()]).toEqual([
      [2, 2_000],
      [1, 1_000],
      [0, 0],
    ]);
  });
});
