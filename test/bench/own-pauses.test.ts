import { performance } from 'node:perf_hooks';
import { OwnPauses, splitByPauses, withoutPauses } from '../../bench/own-pauses';
import { collectGarbage as collect } from '../support/collect-garbage';
/** Node hands a pause to its observers in an immediate after the collection. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the benchmark process watching its own collector', () => {
  it('tells a span that a pause fell in from one it did not', async () => {
    const pauses = new OwnPauses();
    const quiet = { start: performance.now(), end: performance.now() };
    const start = performance.now();
    collect();
    const end = performance.now();
    await nextTurn();
    pauses.stop();
    expect(pauses.overlaps({ start, end })).toBe(true);
    expect(pauses.overlaps(quiet)).toBe(false);
    expect(pauses.overlaps({ start: end + 1, end: end + 2 })).toBe(false);
  });

  it('sees nothing once stopped', async () => {
    const pauses = new OwnPauses();
    pauses.stop();
    const start = performance.now();
    collect();
    const end = performance.now();
    await nextTurn();
    expect(pauses.overlaps({ start, end })).toBe(false);
  });

  it('gives the percentiles of the samples no pause fell in, and how many one did', async () => {
    const pauses = new OwnPauses();
    // Before the watch began: no pause it saw can fall in it.
    const watchedFrom = performance.now();
    const quiet = { start: watchedFrom - 1, end: watchedFrom - 0.5 };
    const paused = { start: performance.now(), end: 0 };
    collect();
    paused.end = performance.now();
    await nextTurn();
    pauses.stop();

    const split = splitByPauses([quiet, paused, quiet], pauses);
    expect(split).toEqual({ samples: 3, pausedSamples: 1, unpaused: { p50: 0.5, p99: 0.5 } });
    expect(withoutPauses(split, 'its')).toBe('without the 1 sample (33.3%) its collector paused in: p50 0.50 ms, p99 0.50 ms');
    expect(splitByPauses([paused], pauses)).toEqual({ samples: 1, pausedSamples: 1 });
    expect(withoutPauses(splitByPauses([paused], pauses), 'its')).toBe('without the 1 sample (100.0%) its collector paused in: none left');
  });
});
