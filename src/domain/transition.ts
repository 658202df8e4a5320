import type { JobFact } from './event-facts';
import type { Job, JobState } from './job';
import { summarizeError } from './event-facts';
import type { WorkerState } from './worker';

/**
 * One job changing state: what telemetry records for every transition, and
 * (with its kind) the fact a store logs for it (event-facts.ts JobFact).
 */
export type JobTransition = Omit<JobFact, 'kind'>;

/** One worker changing state; "none" before registration, "terminated" after removal. */
export interface WorkerTransition {
  workerId: string;
  from: WorkerState | 'none';
  to: WorkerState | 'terminated';
  /** Why, for removals: "deregistered" or "dead". */
  reason?: string;
}

/** The transition that produced `job` from a job in state `from`, at `at`. */
export function transitionOf(job: Job, from: JobState | 'none', at: number, workerId?: string): JobTransition {
  const record: JobTransition = { at, jobId: job.id, jobType: job.type, queue: job.queue, from, to: job.state, attempt: job.attempt };
  const holder = workerId ?? job.lease?.workerId;
  if (holder !== undefined) record.workerId = holder;
  if (job.state === 'active') {
    record.startedAt = job.startedAt;
    record.enqueuedAt = job.enqueuedAt;
  } else if (from === 'active') {
    record.startedAt = job.startedAt;
  }
  if (from === 'none') {
    record.priority = job.priority;
    if (job.state === 'scheduled') record.scheduledAt = job.scheduledAt;
  }
  if (job.state === 'retryable') record.nextRetryAt = job.nextRetryAt;
  // Only an error this transition recorded: an earlier attempt's stays on the job (a cancel, a release) but is not news.
  if (job.error !== undefined && job.error.occurredAt === at && job.state !== 'completed') {
    record.error = summarizeError(job.error);
    record.maxAttempts = job.retry.maxAttempts;
  }
  if (job.state === 'discarded') record.deadLetter = job.deadLetter;
  const traceparent = job.meta['traceparent'];
  if (typeof traceparent === 'string') record.traceparent = traceparent;
  return record;
}
