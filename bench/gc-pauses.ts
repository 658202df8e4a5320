import { join } from 'node:path';
import { projectRoot } from '../src/project-root';
import type { JsonLine } from '../tools/json-lines-process';

/** NODE_OPTIONS for a process whose collections are counted: it prints each pause (gc-trace.ts). */
export const GC_TRACE_OPTIONS = `--require ${join(projectRoot(), 'dist', 'bench', 'gc-trace.js')}`;

/** The pauses of one kind of collection: how many, their sum and the longest, in ms of the main thread. */
export interface Pauses {
  count: number;
  totalMs: number;
  longestMs: number;
}

/**
 * The collector's pauses over a window: the young generation's (scavenges)
 * and the old generation's (whole-heap collections, their incremental
 * marking steps and weak callbacks).
 */
export interface GcPauses {
  young: Pauses;
  old: Pauses;
  /**
   * What the old generation grew by from one young-generation pause to the
   * next, summed over the window where no old-generation pause came
   * between: what outlived the young generation, to be collected with the
   * whole heap.
   */
  promotedBytes: number;
}

const none = (): Pauses => ({ count: 0, totalMs: 0, longestMs: 0 });

/** The pauses among a traced process's lines (`lines`, as JsonLinesProcess keeps them) from index `from` on. */
export function gcPausesSince(lines: readonly JsonLine[], from: number): GcPauses {
  const pauses: GcPauses = { young: none(), old: none(), promotedBytes: 0 };
  // The old generation after the last young pause, while no old one came since.
  let oldAfterYoung: number | undefined;
  for (const line of lines.slice(from)) {
    if (line['msg'] !== 'gc pause') continue;
    const isYoung = line['kind'] === 'young';
    const kind = isYoung ? pauses.young : pauses.old;
    const ms = Number(line['ms']);
    kind.count += 1;
    kind.totalMs += ms;
    kind.longestMs = Math.max(kind.longestMs, ms);
    const old = Number(line['old']);
    if (isYoung && oldAfterYoung !== undefined) pauses.promotedBytes += old - oldAfterYoung;
    oldAfterYoung = isYoung ? old : undefined;
  }
  return pauses;
}

const longest = (p: Pauses): string => (p.count > 0 ? ` (longest ${p.longestMs.toFixed(1)} ms)` : '');

/**
 * "40 young-generation pauses, 205 ms in all (longest 9.1 ms), promoting
 * 0.85 MB/s; 3 old-generation (longest 120.4 ms)", over a window of `seconds`.
 */
export function describePauses({ young, old, promotedBytes }: GcPauses, seconds: number): string {
  const promoted = (promotedBytes / 2 ** 20 / seconds).toFixed(2);
  return `${young.count} young-generation pause${young.count === 1 ? '' : 's'}, ${young.totalMs.toFixed(0)} ms in all${longest(young)}, promoting ${promoted} MB/s; ${old.count} old-generation${longest(old)}`;
}
