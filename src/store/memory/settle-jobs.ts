import { jobNotFound, leaseNotHeld } from '../../domain/errors';
import type { Job } from '../../domain/job';
import { leaseProblem } from '../../domain/lease';
import type { JobTransition } from '../../domain/transition';
import type {
  AckParams,
  ExtendLeaseParams,
  FailParams,
  ProgressParams,
  RecoverParams,
  ReleaseParams,
  SettlementOutcome,
} from '../job-store';
import { transition, type JobSlot, type MemoryTables } from './memory-tables';

/**
 * What happens to held jobs: settlement (ack, fail), recovery of lapsed
 * leases, undelivered claims undone, lease extensions and progress. Each change records its fact, and
 * a lease renewal its heartbeat notice while someone listens.
 */

/** See JobStore.releaseUndelivered. */
export function releaseUndelivered(tables: MemoryTables, params: ReleaseParams): JobTransition[] {
  const transitions: JobTransition[] = [];
  for (const { jobId, leaseToken } of params.leases) {
    const slot = tables.jobs.get(jobId);
    const lease = slot?.job.lease;
    if (slot === undefined || lease === undefined || lease.token !== leaseToken) continue;
    if (params.requireUnconfirmedLapse) {
      const lastBeatAt = tables.workers.get(lease.workerId)?.worker.lastBeatAt ?? 0;
      if (lease.isConfirmed || lease.expiresAt > params.now || lastBeatAt <= (slot.job.startedAt ?? 0)) continue;
    }
    const before = slot.job;
    tables.releaseHeld(lease.workerId, jobId);
    tables.update(slot, { state: 'available', attempt: before.attempt - 1, lease: undefined, enqueuedAt: params.now });
    const released = transition(before, slot.job, params.now);
    // Nothing is recorded against the job: an error it carries is an earlier attempt's, not this change's.
    delete released.error;
    delete released.maxAttempts;
    released.reason = 'undelivered';
    tables.record(released);
    transitions.push(released);
  }
  return transitions;
}

export function ack(tables: MemoryTables, params: AckParams): SettlementOutcome[] {
  return params.items.map((item): SettlementOutcome => {
    const slot = heldSlot(tables, item.jobId, params.workerId, item.leaseToken);
    if (slot instanceof Error) return { ok: false, error: slot };
    tables.releaseHeld(params.workerId, item.jobId);
    // ojs-progress 8.1: a completed job that reported progress is at 1.0.
    const progress = slot.job.progress === undefined ? undefined : 1;
    const patch = {
      state: 'completed',
      completedAt: params.now,
      result: item.result,
      error: undefined,
      lease: undefined,
      progress,
    } as const;
    return settledBy(tables.transit(slot, patch, params.now));
  });
}

export function fail(tables: MemoryTables, params: FailParams): SettlementOutcome[] {
  return params.items.map((item): SettlementOutcome => {
    const slot = heldSlot(tables, item.jobId, params.workerId, item.leaseToken);
    if (slot instanceof Error) return { ok: false, error: slot };
    const settled = settledBy(tables.applyOutcome(slot, item.outcome, params.now));
    if (slot.job.nextRetryAt !== undefined) settled.nextRetryAt = slot.job.nextRetryAt;
    return settled;
  });
}

/** A settlement that made `change`. */
function settledBy(change: JobTransition): SettlementOutcome & { ok: true } {
  return { ok: true, state: change.to, transition: change };
}

/** Applies decided outcomes to active jobs, each only if it still holds the given lease (and, if asked, that lease expired). */
export function recover(tables: MemoryTables, params: RecoverParams): JobTransition[] {
  const transitions: JobTransition[] = [];
  for (const item of params.items) {
    const slot = tables.jobs.get(item.jobId);
    const lease = slot?.job.lease;
    if (slot === undefined || lease === undefined || lease.token !== item.leaseToken) continue;
    if (item.requireExpired && lease.expiresAt > params.now) continue;
    transitions.push(tables.applyOutcome(slot, item.outcome, params.now));
  }
  return transitions;
}

/** Renews a held job's lease; returns its new expiry. Throws when the worker does not hold it. */
export function extendLease(tables: MemoryTables, params: ExtendLeaseParams): number {
  const slot = heldSlot(tables, params.jobId, params.workerId, params.leaseToken);
  if (slot instanceof Error) throw slot;
  const visibleUntil = tables.renewLease(slot, params.now);
  if (tables.heartbeats.isFollowed) {
    const { job } = slot;
    const renewed = { jobId: job.id, jobType: job.type, queue: job.queue, attempt: job.attempt, visibleUntil };
    tables.heartbeats.add({ at: params.now, workerId: params.workerId, jobs: [renewed] });
  }
  return visibleUntil;
}

/** See JobStore.recordProgress. */
export function recordProgress(tables: MemoryTables, params: ProgressParams): { applied: boolean; leaseExpiresAt?: number } {
  const slot = heldSlot(tables, params.jobId, params.workerId, params.leaseToken);
  if (slot instanceof Error) return { applied: false };
  const patch: Partial<Job> = {};
  if (params.progress !== undefined) patch.progress = mergeProgress(slot.job.progress, params.progress);
  if (params.data !== undefined) patch.progressData = params.data;
  if (params.checkpoint !== undefined) patch.lastCheckpoint = params.checkpoint;
  tables.update(slot, patch);
  const { job } = slot;
  const traceparent = job.meta['traceparent'];
  tables.record({
    kind: 'progress',
    at: params.now,
    jobId: job.id,
    jobType: job.type,
    queue: job.queue,
    workerId: params.workerId,
    attempt: job.attempt,
    ...(patch.progress === undefined ? {} : { progress: patch.progress }),
    ...(typeof traceparent === 'string' ? { traceparent } : {}),
  });
  return { applied: true, leaseExpiresAt: tables.renewLease(slot, params.now) };
}

/** The job if `workerId` holds its current lease, else the refusal. */
function heldSlot(tables: MemoryTables, jobId: string, workerId: string, token: string): JobSlot | Error {
  const slot = tables.jobs.get(jobId);
  if (slot === undefined) return jobNotFound(jobId);
  const problem = leaseProblem(slot.job, workerId, token);
  return problem === undefined ? slot : leaseNotHeld(jobId, problem, slot.job.state);
}

/** ojs-progress 5.1: clamped to 0..1, and never lower than what the attempt reported. */
function mergeProgress(previous: number | undefined, reported: number): number {
  const clamped = Math.min(1, Math.max(0, reported));
  return previous === undefined ? clamped : Math.max(previous, clamped);
}
