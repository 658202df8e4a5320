import { compareCursors, type QueueFact, type RecordedFact } from '../../../src/domain/event-facts';
import { FactLog } from '../../../src/store/memory/fact-log';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function fact(at: number, n: number): QueueFact {
  return { kind: 'queue', at, queue: `q-${n}`, paused: n % 2 === 0 };
}

const queueOf = (recorded: RecordedFact): string => (recorded.fact.kind === 'queue' ? recorded.fact.queue : '');

describe('FactLog', () => {
  it('holds the newest facts of its count through many compactions, reading after any cursor held', () => {
    const log = new FactLog({ maxCount: 100, maxAgeMs: 86_400_000 }, Number.MAX_SAFE_INTEGER);
    for (let n = 0; n < 5_000; n++) log.record(fact(T0 + Math.floor(n / 3), n));
    const { facts, oldest } = log.read(undefined, 1_000);
    expect(facts.map(queueOf)).toEqual(Array.from({ length: 100 }, (_, i) => `q-${4_900 + i}`));
    expect(oldest).toBe(facts[0]!.cursor);
    expect(facts.slice(1).every((r, i) => compareCursors(facts[i]!.cursor, r.cursor) < 0)).toBe(true);
    expect(log.read(facts[49]!.cursor, 10).facts).toEqual(facts.slice(50, 60));
    expect(log.read(facts[99]!.cursor, 10).facts).toEqual([]);
    const sizes = [...log.held()].reduce((sum, held) => sum + held.bytes, 0);
    expect(log.bytes).toBe(sizes);
  });

  it('hands each follower what it is owed once, resuming a follower left behind at the oldest fact', () => {
    const log = new FactLog({ maxCount: 10, maxAgeMs: 86_400_000 }, Number.MAX_SAFE_INTEGER);
    for (let n = 0; n < 5; n++) log.record(fact(T0, n));
    const [behind, current] = [[] as string[], [] as string[]];
    log.follow('0', (facts) => behind.push(...facts.map(queueOf)));
    const stop = log.follow(undefined, (facts) => current.push(...facts.map(queueOf)));
    for (let n = 5; n < 30; n++) log.record(fact(T0, n));
    expect(log.deliver()).toBe(true);
    expect(log.deliver()).toBe(false);
    expect(behind).toEqual(Array.from({ length: 10 }, (_, i) => `q-${20 + i}`));
    expect(current).toEqual(Array.from({ length: 10 }, (_, i) => `q-${20 + i}`));
    stop();
    log.record(fact(T0, 30));
    log.deliver();
    expect([behind.at(-1), current.at(-1)]).toEqual(['q-30', 'q-29']);
  });

  it("numbers facts from the first one's time whatever the clock does, and prunes the oldest up to the first young enough", () => {
    const log = new FactLog({ maxCount: 10, maxAgeMs: 1_000 }, Number.MAX_SAFE_INTEGER);
    for (const at of [T0, T0 + 2_000, T0 + 1_000]) log.record(fact(at, at - T0));
    expect(log.read(undefined, 10).facts.map((r) => r.cursor)).toEqual([1, 2, 3].map((n) => String(T0 * 1_000 + n)));
    expect(log.prune(T0 + 2_500)).toBe(1);
    expect(log.prune(T0 + 3_001)).toBe(2);
    expect(log.read(undefined, 10)).toEqual({ facts: [] });
  });
});
