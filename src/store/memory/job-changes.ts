import { invalidTransition, jobNotFound, OjsError, waitsForWorkflow } from '../../domain/errors';
import type { Job } from '../../domain/job';
import { assertTransition, isTerminal } from '../../domain/job-state-machine';
import type { JobTransition } from '../../domain/transition';
import type { BulkChangeParams, BulkOutcome } from '../job-store';
import type { JobSlot, MemoryTables } from './memory-tables';

/**
 * The changes operators and producers ask for (cancel, activate, retry,
 * delete), one job at a time: the single-job store methods and the bulk
 * ones share them. Each checks its precondition, throws an OjsError when it
 * does not hold, and otherwise applies and records the change.
 */

/** Who asked for a change and why, as its fact tells it. */
export type ChangeAuthor = Pick<BulkChangeParams, 'actor' | 'reason'>;

/** Cancels a job that has not finished, telling its worker if it was active; undefined when it already was cancelled. */
export function cancelJob(tables: MemoryTables, slot: JobSlot, now: number, author: ChangeAuthor = {}): JobTransition | undefined {
  const before = slot.job;
  if (before.state === 'cancelled') return undefined;
  assertTransition(before.id, before.state, 'cancelled');
  if (before.lease !== undefined) {
    tables.releaseHeld(before.lease.workerId, before.id);
    tables.signal({ kind: 'jobsCancelled', workerId: before.lease.workerId, jobIds: [before.id] });
  }
  const extra: Partial<JobTransition> = {};
  if (author.actor !== undefined) extra.actor = author.actor;
  if (author.reason !== undefined) extra.reason = author.reason;
  return tables.transit(slot, { state: 'cancelled', completedAt: now, lease: undefined, nextRetryAt: undefined }, now, extra);
}

/** pending -> available. */
export function activateJob(tables: MemoryTables, slot: JobSlot, now: number): JobTransition {
  if (slot.job.state !== 'pending') throw invalidTransition(slot.job.id, slot.job.state, 'available');
  if (slot.job.workflow !== undefined) throw waitsForWorkflow(slot.job.id, slot.job.workflow.id);
  return tables.transit(slot, { state: 'available', enqueuedAt: now }, now);
}

/**
 * Makes a job available again: a discarded one with its attempts, errors,
 * result and progress reset (ojs-core 6.3), a retryable one now instead of
 * at its next_retry_at, keeping its attempts and errors.
 */
export function retryJob(tables: MemoryTables, slot: JobSlot, now: number, author: ChangeAuthor = {}): JobTransition {
  const { state, id } = slot.job;
  const extra: Partial<JobTransition> = author.actor === undefined ? {} : { actor: author.actor };
  if (state === 'retryable') return makeAvailable(tables, slot, now, extra);
  if (state !== 'discarded') throw invalidTransition(id, state, 'available');
  const reset: Partial<Job> = {
    state: 'available',
    attempt: 0,
    enqueuedAt: now,
    completedAt: undefined,
    error: undefined,
    errors: [],
    result: undefined,
    deadLetter: false,
    progress: undefined,
    progressData: undefined,
  };
  return tables.transit(slot, reset, now, extra);
}

/** A waiting job whose time came, or a retryable one retried early: available now. */
export function makeAvailable(tables: MemoryTables, slot: JobSlot, now: number, extra?: Partial<JobTransition>): JobTransition {
  return tables.transit(slot, { state: 'available', enqueuedAt: now, nextRetryAt: undefined }, now, extra);
}

/** Deletes a finished job and every trace of it; records nothing (ojs-bulk-operations: deletion is not a lifecycle event). */
export function deleteJob(tables: MemoryTables, slot: JobSlot): void {
  if (!isTerminal(slot.job.state)) throw invalidTransition(slot.job.id, slot.job.state, 'deleted');
  tables.remove(slot);
}

/**
 * Applies `change` to each job on its own, one outcome per id in order:
 * not_found for an unknown id, the refusal for a job whose state does not
 * allow it, else the transition made (none when nothing needed doing).
 */
export function changeEach(
  tables: MemoryTables,
  jobIds: readonly string[],
  change: (slot: JobSlot) => JobTransition | undefined,
): BulkOutcome[] {
  return jobIds.map((jobId): BulkOutcome => {
    const slot = tables.jobs.get(jobId);
    if (slot === undefined) return { ok: false, error: jobNotFound(jobId) };
    try {
      const transition = change(slot);
      return transition === undefined ? { ok: true } : { ok: true, transition };
    } catch (error) {
      // A refusal is this item's outcome; anything else is a bug that must not pass for one.
      if (error instanceof OjsError) return { ok: false, error };
      throw error;
    }
  });
}
