import type { Job, JobError } from './job';
import { appendError, stampError, type FailureReport } from './job-error';
import { backoffDelayMs, isNonRetryable } from './retry-policy';

/**
 * Where a failed attempt sends a job. The domain decides; a store only checks
 * that the attempt is still the one the decision was made for, and applies it.
 */
export type FailureOutcome = { error: JobError; errors: JobError[] } & (
  | { state: 'retryable'; nextRetryAt: number }
  | { state: 'available' }
  | { state: 'discarded'; deadLetter: boolean }
);

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
 * server.
 */
export function decideFailure(job: Job, report: FailureReport, context: FailureContext): FailureOutcome {
  const error = stampError(report, job.attempt, context.now);
  const recorded = { error, errors: appendError(job.errors, error) };
  const policy = job.retry;
  switch (report.code) {
    case 'discard':
    case 'fail':
      return { state: 'discarded', deadLetter: false, ...recorded };
    case 'dead_letter':
      return { state: 'discarded', deadLetter: true, ...recorded };
    default:
      break;
  }
  if (isNonRetryable(policy, report.type) || job.attempt >= policy.maxAttempts) {
    return { state: 'discarded', deadLetter: policy.onExhaustion === 'dead_letter', ...recorded };
  }
  if (context.requeueAtOnce === true) return { state: 'available', ...recorded };
  return { state: 'retryable', nextRetryAt: context.now + backoffDelayMs(policy, job.attempt, context.random), ...recorded };
}
