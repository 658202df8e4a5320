import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

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
