import { join } from 'node:path';
import { projectRoot } from '../src/project-root';
import type { JsonLine } from '../tools/json-lines-process';

/** NODE_OPTIONS for a process whose event loop is watched: it prints its lateness each second (loop-delay-trace.ts). */
export const LOOP_DELAY_TRACE_OPTIONS = `--require ${join(projectRoot(), 'dist', 'bench', 'loop-delay-trace.js')}`;

/** How often the traced process's timer is due, in ms. */
export const LOOP_DELAY_RESOLUTION_MS = 10;

/** How late a traced event loop ran over a window of whole seconds, in ms. */
export interface LoopDelays {
  seconds: number;
  /** The median second's p99: how late the loop usually ran at worst. */
  medianP99Ms: number;
  /** The worst second's p99. */
  worstP99Ms: number;
  /** The longest single delay. */
  longestMs: number;
}

/** The lateness among a traced process's lines (`lines`, as JsonLinesProcess keeps them) from index `from` on. */
export function loopDelaysSince(lines: readonly JsonLine[], from: number): LoopDelays {
  const seconds = lines.slice(from).filter((line) => line['msg'] === 'loop delay');
  const p99s = seconds.map((line) => Number(line['p99'])).toSorted((a, b) => a - b);
  return {
    seconds: seconds.length,
    medianP99Ms: p99s[Math.floor((p99s.length - 1) / 2)] ?? 0,
    worstP99Ms: p99s.at(-1) ?? 0,
    longestMs: Math.max(0, ...seconds.map((line) => Number(line['longest']))),
  };
}

/** "late by 1.2 ms at p99 in the median second (worst second 3.4 ms), 12.0 ms at the longest". */
export function describeLoopDelays({ seconds, medianP99Ms, worstP99Ms, longestMs }: LoopDelays): string {
  if (seconds === 0) return 'not measured (no whole second traced)';
  return `late by ${medianP99Ms.toFixed(1)} ms at p99 in the median second (worst second ${worstP99Ms.toFixed(1)} ms), ${longestMs.toFixed(1)} ms at the longest`;
}
