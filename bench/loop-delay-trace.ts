import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LOOP_DELAY_RESOLUTION_MS } from './loop-delays';

/**
 * Preloaded into a process the benchmark watches (loop-delays.ts
 * LOOP_DELAY_TRACE_OPTIONS): once a second prints a JSON line, among the
 * process's own, with how late its event loop ran a timer due every
 * LOOP_DELAY_RESOLUTION_MS over that second (p99 and longest, in ms): what
 * a message that arrived then waited before the process could look at it.
 * A coarse resolution keeps the tracer's own wake-ups (100 a second) to a
 * small share of the traced process's CPU, which the figures include.
 */
const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
histogram.enable();

/** The histogram holds whole intervals between the timer's runs; lateness is what exceeds the resolution. */
const lateMs = (nanos: number): number => Math.max(0, nanos / 1e6 - LOOP_DELAY_RESOLUTION_MS);

setInterval(() => {
  if (histogram.count > 0) {
    const line = { msg: 'loop delay', p99: lateMs(histogram.percentile(99)), longest: lateMs(histogram.max) };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  histogram.reset();
}, 1_000).unref();
