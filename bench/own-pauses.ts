import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { count, ms, pct } from './format';
import { percentiles, type Percentiles } from './percentiles';

/** A stretch of time on performance.now()'s clock, in ms. */
export interface Span {
  start: number;
  end: number;
}

/**
 * The pauses this process's garbage collector makes on its main thread
 * while it watches (every kind), for telling apart the samples a
 * measurement's own pauses stretched: the benchmark is the client, and a
 * pause of its own lengthens whatever sample it falls in, whatever the
 * server did.
 */
export class OwnPauses {
  private readonly pauses: Span[] = [];
  private isWatching = true;
  private readonly observer = new PerformanceObserver((list) => this.record(list.getEntries()));

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Stops watching (again: nothing); the pauses seen stay readable. */
  stop(): void {
    if (!this.isWatching) return;
    this.isWatching = false;
    // Entries not yet delivered to the callback (a pause just before) come with takeRecords.
    this.record(this.observer.takeRecords());
    this.observer.disconnect();
  }

  private record(entries: readonly PerformanceEntry[]): void {
    for (const entry of entries) this.pauses.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  }

  /** Whether a pause fell within `span`, in part or in whole. */
  overlaps(span: Span): boolean {
    return this.pauses.some((pause) => pause.start < span.end && pause.end > span.start);
  }
}

/** Latency samples told apart by whether a pause of the measuring process fell in them. */
export interface PauseSplit {
  samples: number;
  pausedSamples: number;
  /** The percentiles of the samples no pause fell in; absent when one fell in every sample. */
  unpaused?: Percentiles;
}

/** Splits timed samples (`spans`) by whether one of `pauses` fell in them. */
export function splitByPauses(spans: readonly Span[], pauses: OwnPauses): PauseSplit {
  const unpaused = spans.filter((span) => !pauses.overlaps(span)).map((span) => span.end - span.start);
  return {
    samples: spans.length,
    pausedSamples: spans.length - unpaused.length,
    ...(unpaused.length > 0 ? { unpaused: percentiles(unpaused) } : {}),
  };
}

/** "without the 12 samples (0.6%) <whose> collector paused in: p50 …, p99 …". */
export function withoutPauses(split: PauseSplit, whose: string): string {
  const samples = `${count(split.pausedSamples)} sample${split.pausedSamples === 1 ? '' : 's'} (${pct(split.pausedSamples / split.samples)})`;
  return `without the ${samples} ${whose} collector paused in: ${split.unpaused === undefined ? 'none left' : ms(split.unpaused)}`;
}
