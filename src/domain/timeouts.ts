import type { Job } from './job';
import { EXPIRY_REPORT, type FailureReport } from './job-error';

/**
 * The timeout model of timeouts.md. An active job has one lease, and its
 * expiry is the earliest of every deadline that applies to it, so that one
 * index drives every reclaim; when it lapses, {@link activeExpiryCause}
 * tells which deadline it was.
 */

/** The kinds of timeouts.md section 8, plus the two reclaims the worker protocol defines. */
export type ActiveExpiry = 'total_timeout' | 'timeout' | 'unconfirmed' | 'stalled' | 'visibility_timeout';
export type TimeoutKind = 'execution' | 'total' | 'enqueue_ttl' | 'stalled';

/**
 * When the lease of an active job lapses, given when the worker last showed
 * it holds the job. Until confirmed (a beat lists it), the visibility part
 * lasts at most `confirmWithinMs` (see lease.ts claimLease).
 */
export function leaseExpiry(job: Job, renewedAt: number, isConfirmed: boolean, confirmWithinMs: number): number {
  const visibility = isConfirmed ? job.visibilityTimeoutMs : Math.min(job.visibilityTimeoutMs, confirmWithinMs);
  let at = Math.min(
    renewedAt + visibility,
    renewedAt + job.heartbeatTimeoutMs,
    (job.startedAt ?? renewedAt) + job.timeoutMs + job.gracePeriodMs,
  );
  if (job.totalTimeoutMs !== undefined) at = Math.min(at, job.createdAt + job.totalTimeoutMs);
  return at;
}

/**
 * Which deadline of an active job has passed at `now`, by precedence (the
 * total timeout wins over everything, timeouts.md 5.2), or undefined when
 * none has (its lease was renewed after it was found).
 */
export function activeExpiryCause(job: Job, now: number, confirmWithinMs: number): ActiveExpiry | undefined {
  const lease = job.lease;
  if (lease === undefined) return undefined;
  const startedAt = job.startedAt ?? lease.renewedAt;
  if (job.totalTimeoutMs !== undefined && job.createdAt + job.totalTimeoutMs <= now) return 'total_timeout';
  if (startedAt + job.timeoutMs + job.gracePeriodMs <= now) return 'timeout';
  // Visibility and stall both run from the last renewal; the shorter limit lapses
  // first, and on a tie the worker protocol's own visibility timeout names it.
  const renewalLimit = Math.min(job.visibilityTimeoutMs, job.heartbeatTimeoutMs);
  if (!lease.isConfirmed && confirmWithinMs < renewalLimit && lease.renewedAt + confirmWithinMs <= now) return 'unconfirmed';
  if (lease.renewedAt + renewalLimit > now) return undefined;
  return job.visibilityTimeoutMs <= job.heartbeatTimeoutMs ? 'visibility_timeout' : 'stalled';
}

/**
 * When the worker is told to stop the attempt: at its execution timeout (the
 * grace period starts), or at the total timeout if that comes first (the job
 * is discarded at once; the worker should stop working on it).
 */
export function softTimeoutAt(job: Job): number {
  return Math.min((job.startedAt ?? 0) + job.timeoutMs, totalDeadline(job) ?? Infinity);
}

/**
 * When a waiting job must be discarded instead of run: the earliest of its
 * expires_at, its total timeout and, before its first attempt, its enqueue TTL.
 */
export function waitingDeadline(job: Job): number | undefined {
  const deadlines = [job.expiresAt, totalDeadline(job), job.attempt === 0 ? ttlDeadline(job) : undefined].filter(
    (d): d is number => d !== undefined,
  );
  return deadlines.length === 0 ? undefined : Math.min(...deadlines);
}

function totalDeadline(job: Job): number | undefined {
  return job.totalTimeoutMs === undefined ? undefined : job.createdAt + job.totalTimeoutMs;
}

function ttlDeadline(job: Job): number | undefined {
  return job.enqueueTtlMs === undefined ? undefined : job.createdAt + job.enqueueTtlMs;
}

/** The error of a timeout, with the data timeouts.md section 8 asks for. */
export function timeoutReport(kind: TimeoutKind, limitMs: number, elapsedMs: number): FailureReport {
  const type = { execution: 'timeout', total: 'total_timeout', enqueue_ttl: 'enqueue_ttl_expired', stalled: 'stalled' }[kind];
  const limitSeconds = Math.round(limitMs / 1000);
  const messages: Record<TimeoutKind, string> = {
    execution: `job execution exceeded its timeout of ${limitSeconds} s`,
    total: `job exceeded its total timeout of ${limitSeconds} s`,
    enqueue_ttl: `job waited longer than its enqueue TTL of ${limitSeconds} s`,
    stalled: `no heartbeat mentioned the job for ${limitSeconds} s`,
  };
  return {
    type,
    message: messages[kind],
    details: { timeout_kind: kind, limit_seconds: limitSeconds, elapsed_seconds: Math.round(elapsedMs / 1000) },
  };
}

/** The report for an active job whose lease lapsed, per its cause (unconfirmed deliveries are released, not reported). */
export function activeExpiryReport(job: Job, cause: Exclude<ActiveExpiry, 'unconfirmed'>, now: number): FailureReport {
  const startedAt = job.startedAt ?? now;
  switch (cause) {
    case 'total_timeout':
      return timeoutReport('total', job.totalTimeoutMs ?? 0, now - job.createdAt);
    case 'timeout':
      return timeoutReport('execution', job.timeoutMs, now - startedAt);
    case 'stalled':
      return timeoutReport('stalled', job.heartbeatTimeoutMs, now - (job.lease?.renewedAt ?? startedAt));
    case 'visibility_timeout':
      return { type: 'visibility_timeout', message: `visibility timeout of ${Math.round(job.visibilityTimeoutMs / 1000)} s expired` };
  }
  const unknownCause: never = cause;
  throw new Error(`unknown lease expiry cause: ${String(unknownCause)}`);
}

/**
 * Why a waiting job past its {@link waitingDeadline} is discarded: its total
 * timeout, its enqueue TTL or its expires_at, in that order of precedence.
 */
export function waitingExpiryReport(job: Job, now: number): FailureReport {
  const total = totalDeadline(job);
  if (total !== undefined && total <= now) return timeoutReport('total', job.totalTimeoutMs!, now - job.createdAt);
  const ttl = job.attempt === 0 ? ttlDeadline(job) : undefined;
  if (ttl !== undefined && ttl <= now) return timeoutReport('enqueue_ttl', job.enqueueTtlMs!, now - job.createdAt);
  return EXPIRY_REPORT;
}

/** Whether a retry after `delayMs` could still finish within the total timeout (timeouts.md 9.1). */
export function retryFitsTotalTimeout(job: Job, now: number, delayMs: number): boolean {
  const total = totalDeadline(job);
  return total === undefined || now + delayMs + job.timeoutMs <= total;
}

/** The timeout kind an error type names (timeouts.md 8), if it names one. */
const TIMEOUT_KIND_OF: Readonly<Record<string, TimeoutKind>> = {
  timeout: 'execution',
  stalled: 'stalled',
  enqueue_ttl_expired: 'enqueue_ttl',
  total_timeout: 'total',
};

/**
 * A failure report with the details every timeout error carries (timeouts.md
 * 8: timeout_kind, limit_seconds, elapsed_seconds). A timeout the server
 * detected has them already (timeoutReport); one a worker reported may not,
 * and then the job's own limit and times at `now` fill in.
 */
export function withTimeoutDetails(job: Job, report: FailureReport, now: number): FailureReport {
  const kind = TIMEOUT_KIND_OF[report.type];
  if (kind === undefined || typeof report.details?.['timeout_kind'] === 'string') return report;
  const limitsMs: Record<TimeoutKind, number> = {
    execution: job.timeoutMs,
    stalled: job.heartbeatTimeoutMs,
    enqueue_ttl: job.enqueueTtlMs ?? 0,
    total: job.totalTimeoutMs ?? 0,
  };
  const since = kind === 'execution' || kind === 'stalled' ? (job.startedAt ?? job.createdAt) : job.createdAt;
  const { details } = timeoutReport(kind, limitsMs[kind], now - since);
  return { ...report, details: { ...details, ...report.details } };
}
