import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Preloaded into a process the benchmark watches (gc-pauses.ts
 * GC_TRACE_OPTIONS): prints a JSON line, among the process's own, for each
 * pause the garbage collector makes on the main thread, with what the old
 * generation holds as the line is written (soon after the pause; pauses
 * reported together share it), which the benchmark reads window by window.
 */
const YOUNG = constants.NODE_PERFORMANCE_GC_MINOR;

const oldSpaceUsed = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0;

new PerformanceObserver((list) => {
  const old = oldSpaceUsed();
  for (const entry of list.getEntries()) {
    // A gc entry's detail names its kind (Node's typings leave it out of PerformanceEntry).
    const { detail } = entry as { detail?: { kind?: number } };
    const kind = detail?.kind === YOUNG ? 'young' : 'old';
    process.stdout.write(`${JSON.stringify({ msg: 'gc pause', kind, ms: entry.duration, old })}\n`);
  }
}).observe({ entryTypes: ['gc'] });
