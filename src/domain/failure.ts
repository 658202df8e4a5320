import type { Job, JobError } from './job';
import { appendError, stampError, type FailureReport } from './job-error';
import { backoffDelayMs, isNonRetryable } from './retry-policy';
import { retryFitsTotalTimeout, timeoutReport, withTimeoutDetails } from './timeouts';

/**
 * Where a failed attempt sends a job. The domain decides; a store only checks
 * that the attempt is still the one the decision was made for, and applies it.
 */
export type FailureOutcome = {
  error: JobError;
  errors: JobError[];
  /** The attempts the job's policy allows: what its job.retrying event reports. */
  maxAttempts: number;
} & ({ state: 'retryable'; nextRetryAt: number } | { state: 'available' } | { state: 'discarded'; deadLetter: boolean });

export interface FailureContext {
  now: number;
  /** Uniform random number in [0, 1), for jitter. */
  random: () => number;
  /**
   * Requeue at once instead of waiting for the backoff: the attempt was lost
   * with its worker, not refused by the handler (worker-protocol 10.2).
   */
  requeueAtOnce?: boolean;
}

/**
 * Applies the retry policy to a failure of the job's current attempt
 * (ojs-retry sections 6-8). The attempt counter was incremented when the
 * attempt started, so the failed attempt counts exactly once towards
 * max_attempts whether it was reported by the handler or recovered by the
 * server. The total timeout takes precedence over remaining attempts,
 * including a retry that could not finish in time (timeouts.md 5.2, 9.1).
 */
export function decideFailure(job: Job, report: FailureReport, context: FailureContext): FailureOutcome {
  const error = stampError(withTimeoutDetails(job, report, context.now), job.attempt, context.now);
  const errors = appendError(job.errors, error);
  const policy = job.retry;
  const { maxAttempts } = policy;
  const discard = (deadLetter: boolean): FailureOutcome => ({ state: 'discarded', deadLetter, error, errors, maxAttempts });
  switch (report.code) {
    case 'discard':
    case 'fail':
      return discard(false);
    case 'dead_letter':
      return discard(true);
    case 'retry':
    case undefined:
      // The retry policy decides.
      break;
  }
  const exhausted = policy.onExhaustion === 'dead_letter';
  if (report.type === 'total_timeout' || isNonRetryable(policy, report.type) || job.attempt >= policy.maxAttempts) {
    return discard(exhausted);
  }
  const delayMs = context.requeueAtOnce === true ? 0 : backoffDelayMs(policy, job.attempt, context.random);
  if (!retryFitsTotalTimeout(job, context.now, delayMs)) {
    const totalError = stampError(timeoutReport('total', job.totalTimeoutMs!, context.now - job.createdAt), job.attempt, context.now);
    return { state: 'discarded', deadLetter: exhausted, error: totalError, errors: appendError(errors, totalError), maxAttempts };
  }
  if (context.requeueAtOnce === true) return { state: 'available', error, errors, maxAttempts };
  return { state: 'retryable', nextRetryAt: context.now + delayMs, error, errors, maxAttempts };
}
