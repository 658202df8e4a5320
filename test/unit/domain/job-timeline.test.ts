import type { JobError } from '../../../src/domain/job';
import { jobTimeline } from '../../../src/domain/job-timeline';
import { activeJob } from '../support/active-job';

function failure(attempt: number, occurredAt: number, type = 'Boom'): JobError {
  return { type, message: `attempt ${attempt} failed`, backtrace: [], attempt, occurredAt };
}

describe('a job timeline derived from the envelope', () => {
  it('tells a job that failed once and then completed: both attempts, oldest first', () => {
    const job = activeJob({
      state: 'completed',
      attempt: 2,
      createdAt: 1_000,
      enqueuedAt: 3_000,
      startedAt: 4_000,
      completedAt: 5_000,
      errors: [failure(1, 2_000)],
      lease: undefined,
    });
    expect(jobTimeline(job)).toEqual([
      { kind: 'created', at: 1_000 },
      { kind: 'failed', at: 2_000, attempt: 1, errorType: 'Boom', errorMessage: 'attempt 1 failed' },
      { kind: 'enqueued', at: 3_000 },
      { kind: 'started', at: 4_000, attempt: 2 },
      { kind: 'completed', at: 5_000, attempt: 2 },
    ]);
  });

  it('tells a scheduled job when it was created and when it is due, and nothing more', () => {
    const job = activeJob({ state: 'scheduled', attempt: 0, createdAt: 1_000, scheduledAt: 9_000, startedAt: undefined, lease: undefined });
    expect(jobTimeline(job)).toEqual([
      { kind: 'created', at: 1_000 },
      { kind: 'scheduled', at: 1_000, dueAt: 9_000 },
    ]);
  });

  it('ends a retryable job with when its next attempt is due', () => {
    const job = activeJob({
      state: 'retryable',
      attempt: 1,
      startedAt: 2_000,
      nextRetryAt: 8_000,
      errors: [failure(1, 3_000)],
      lease: undefined,
    });
    expect(jobTimeline(job).map(({ kind, at, attempt }) => [kind, at, attempt])).toEqual([
      ['created', 0, undefined],
      ['started', 2_000, 1],
      ['failed', 3_000, 1],
      ['retry_due', 8_000, 2],
    ]);
  });

  it('says whether a discarded job went to the dead letter', () => {
    const job = activeJob({ state: 'discarded', deadLetter: true, completedAt: 3_000, errors: [failure(1, 3_000)], lease: undefined });
    expect(jobTimeline(job).at(-1)).toEqual({ kind: 'discarded', at: 3_000, attempt: 1, isDeadLetter: true });
  });

  it('keeps the order things happen in when they share a millisecond', () => {
    const job = activeJob({
      state: 'cancelled',
      attempt: 0,
      createdAt: 5,
      enqueuedAt: 5,
      completedAt: 5,
      startedAt: undefined,
      lease: undefined,
    });
    expect(jobTimeline(job).map((entry) => entry.kind)).toEqual(['created', 'enqueued', 'cancelled']);
  });

  it('shows no start the attempt did not make: an undelivered claim after the attempt failed, or a reset by a manual retry', () => {
    // Attempt 1 failed at 2,000; a claim at 4,000 was never delivered and gave attempt 2 back.
    const undelivered = activeJob({
      state: 'available',
      attempt: 1,
      startedAt: 4_000,
      enqueuedAt: 4_500,
      errors: [failure(1, 2_000)],
      lease: undefined,
    });
    expect(jobTimeline(undelivered).map((entry) => entry.kind)).toEqual(['created', 'failed', 'enqueued']);
    const reset = activeJob({ state: 'available', attempt: 0, startedAt: 4_000, enqueuedAt: 6_000, errors: [], lease: undefined });
    expect(jobTimeline(reset).map((entry) => entry.kind)).toEqual(['created', 'enqueued']);
  });
});
