import type { LeaseProblem } from './errors';
import type { Job, Lease } from './job';
import { leaseExpiry } from './timeouts';

/**
 * Why `workerId` presenting `token` may not settle or extend the job, or
 * undefined when it holds the current lease. Only the reserving worker, with
 * the token of the current attempt, may act on an active job
 * (worker-protocol 5.6 and 10.4): this is what stops a worker declared dead,
 * or a late answer from an earlier attempt, from touching the job.
 */
export function leaseProblem(job: Job, workerId: string, token: string): LeaseProblem | undefined {
  if (job.state !== 'active' || job.lease === undefined) return 'not_active';
  if (job.lease.workerId !== workerId) return 'other_worker';
  if (job.lease.token !== token) return 'stale_lease';
  return undefined;
}

/**
 * The lease token of one attempt. A job is claimed at most once per claim
 * call, and the nonce is unique per call, so no two attempts of a job share
 * a token, even after a manual retry resets the attempt counter.
 */
export function leaseToken(claimNonce: string, attempt: number): string {
  return `${claimNonce}.${attempt}`;
}

/**
 * The lease of a freshly claimed attempt (`job` already has its new
 * started_at). A delivery written to a stream the worker has just closed
 * never arrives, and nothing in HTTP/2 tells the server so. Worker-protocol
 * 4.2 makes a worker list every job it holds in every beat, so until a beat
 * lists the job the lease lasts at most `confirmWithinMs` (the worker
 * heartbeat timeout); a lapse there returns the job to the queue without
 * spending an attempt (timeouts.ts activeExpiryCause "unconfirmed").
 */
export function claimLease(job: Job, workerId: string, token: string, now: number, confirmWithinMs: number): Lease {
  return { workerId, token, expiresAt: leaseExpiry(job, now, false, confirmWithinMs), renewedAt: now, isConfirmed: false };
}

/** The lease after the worker showed it holds the job (a beat, progress, an extension). */
export function confirmedLease(job: Job, lease: Lease, now: number): Lease {
  return { ...lease, expiresAt: leaseExpiry(job, now, true, Infinity), renewedAt: now, isConfirmed: true };
}

/** When the reservation ends if the worker keeps confirming it: what a delivery announces. */
export function visibilityDeadline(job: Job): number {
  return leaseExpiry(job, job.lease?.renewedAt ?? job.startedAt ?? 0, true, Infinity);
}
