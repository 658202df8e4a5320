import { TERMINAL_STATES, type Job, type TerminalState } from '../../domain/job';
import type { RetentionPolicy } from '../../domain/retention';
import type { JobTransition } from '../../domain/transition';
import type { DiscardWaitingParams, PromotionPass } from '../job-store';
import { makeAvailable } from './job-changes';
import type { MemoryTables, TimedEntry } from './memory-tables';
import type { MinHeap } from './min-heap';

/**
 * What the background loops ask of the memory store: the changes time
 * brings (promotions, expiries, soft timeouts, retention), read off the
 * deadline heaps.
 */

const WAITING_STATES: ReadonlySet<string> = new Set(['scheduled', 'available', 'pending', 'retryable']);

/** scheduled/retryable jobs whose time has come -> available; then the earliest entry left (it may be stale: early, never late). */
export function promoteDue(tables: MemoryTables, now: number, limit: number): PromotionPass {
  const transitions: JobTransition[] = [];
  const { due } = tables;
  while (transitions.length < limit && (due.peek()?.at ?? Infinity) <= now) {
    const slot = tables.current(due.pop()!);
    if (slot !== undefined) transitions.push(makeAvailable(tables, slot, now));
  }
  return { transitions, nextDueAt: due.peek()?.at };
}

/** Discards waiting jobs as decided, each only if still in the state it was found in. */
export function discardWaiting(tables: MemoryTables, params: DiscardWaitingParams): JobTransition[] {
  const transitions: JobTransition[] = [];
  for (const item of params.items) {
    const slot = tables.jobs.get(item.jobId);
    if (slot === undefined || slot.job.state !== item.expectedState || !WAITING_STATES.has(slot.job.state)) continue;
    const patch = { state: 'discarded', completedAt: params.now, error: item.error, errors: item.errors, nextRetryAt: undefined } as const;
    transitions.push(tables.transit(slot, patch, params.now, { createdAt: slot.job.createdAt }));
  }
  return transitions;
}

/** Takes the soft timeouts due by `now`: each is handed out once. */
export function takeDueSoftTimeouts(tables: MemoryTables, now: number, limit: number): { jobId: string; workerId: string }[] {
  const due: { jobId: string; workerId: string }[] = [];
  while (due.length < limit && (tables.softTimeouts.peek()?.at ?? Infinity) <= now) {
    const job = tables.takeSoftTimeout()?.job;
    if (job?.lease !== undefined) due.push({ jobId: job.id, workerId: job.lease.workerId });
  }
  return due;
}

/**
 * The jobs of the due entries of `heap` that `isLive` accepts; stale ones
 * are dropped. Live entries are put back, so a job stays findable until a
 * change actually applies to it.
 */
export function surfaceDue(
  tables: MemoryTables,
  heap: MinHeap<TimedEntry>,
  now: number,
  limit: number,
  isLive: (entry: TimedEntry) => boolean,
): Job[] {
  const surfaced: TimedEntry[] = [];
  const found: Job[] = [];
  while (found.length < limit && (heap.peek()?.at ?? Infinity) <= now) {
    const entry = heap.pop()!;
    if (!isLive(entry)) continue;
    surfaced.push(entry);
    found.push(tables.jobs.get(entry.id)!.job);
  }
  for (const entry of surfaced) heap.push(entry);
  return found;
}

/** Removes terminal jobs past their retention, oldest first (the oldest of all when over maxJobs); returns how many. */
export function pruneTerminal(tables: MemoryTables, now: number, retention: RetentionPolicy, limit: number): number {
  const retentionMs: Record<TerminalState, number> = {
    completed: retention.completedMs,
    cancelled: retention.cancelledMs,
    discarded: retention.discardedMs,
  };
  let excess = retention.maxJobs > 0 ? tables.terminalCount() - retention.maxJobs : 0;
  let pruned = 0;
  while (pruned < limit) {
    // The oldest entry among the three states goes first when over the cap.
    const heads = TERMINAL_STATES.map((state) => ({ state, head: tables.finished[state].peek() }))
      .filter((h) => h.head !== undefined && (excess > 0 || h.head.at <= now - retentionMs[h.state]))
      .toSorted((a, b) => a.head!.at - b.head!.at);
    const next = heads[0];
    if (next === undefined) break;
    const slot = tables.current(tables.finished[next.state].pop()!);
    if (slot === undefined) continue;
    tables.remove(slot);
    excess -= 1;
    pruned += 1;
  }
  return pruned;
}
