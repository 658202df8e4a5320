import { constants, PerformanceObserver } from 'node:perf_hooks';

/**
 * Preloaded into a process the benchmark watches (gc-pauses.ts
 * GC_TRACE_OPTIONS): prints a JSON line, among the process's own, for each
 * pause the garbage collector makes on the main thread, which the
 * benchmark counts window by window.
 */
const YOUNG = constants.NODE_PERFORMANCE_GC_MINOR;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    // A gc entry's detail names its kind (Node's typings leave it out of PerformanceEntry).
    const { detail } = entry as { detail?: { kind?: number } };
    const kind = detail?.kind === YOUNG ? 'young' : 'old';
    process.stdout.write(`${JSON.stringify({ msg: 'gc pause', kind, ms: entry.duration })}\n`);
  }
}).observe({ entryTypes: ['gc'] });
