import { jobNotFound, OjsError, queueNotPermitted } from '../domain/errors';
import type { Job } from '../domain/job';
import { mayUseQueue, type Principal } from '../domain/principal';

/**
 * What a caller limited to some queues may see and do (ojs-security): it
 * may name only its queues, and a job of another queue is, to it, a job
 * that does not exist, so that a tenant learns nothing of another's jobs.
 */

/** Refuses (PERMISSION_DENIED) a queue the caller may not use; `field` names where the request gave it. */
export function assertMayUseQueue(caller: Principal, field: string, queue: string): void {
  if (!mayUseQueue(caller, queue)) throw queueNotPermitted(field, queue);
}

/** The job if the caller may see it; otherwise the same NOT_FOUND as for a job that does not exist. */
export function visibleJob(caller: Principal, jobId: string, job: Job | undefined): Job {
  if (job === undefined || !mayUseQueue(caller, job.queue)) throw jobNotFound(jobId);
  return job;
}

/**
 * The queue a listing or bulk filter of a queue-scoped caller must name (so
 * that the store selects only jobs the caller may see): the one it gave,
 * if the caller may use it, or the caller's only queue when it gave none.
 * An unscoped caller's filter is left as it is ('' for every queue).
 */
export function scopedFilterQueue(caller: Principal, field: string, queue: string): string {
  if (caller.queues === undefined) return queue;
  if (queue !== '') {
    assertMayUseQueue(caller, field, queue);
    return queue;
  }
  if (caller.queues.size === 1) return [...caller.queues][0]!;
  throw new OjsError('permission_denied', `${field}: a caller limited to several queues must name one of them`, { metadata: { field } });
}

/** Whether the caller may use every queue, so that no scope check need read anything. */
export function isUnscoped(caller: Principal): boolean {
  return caller.queues === undefined;
}
