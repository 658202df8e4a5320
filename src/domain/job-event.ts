import type { Job, JobError } from './job';
import type { TimeoutKind } from './timeouts';

/** The events operators can watch (timeouts.md 11.1). */
export const JOB_EVENT_TYPES = ['job.timeout', 'job.stalled', 'job.ttl_expired', 'job.total_timeout'] as const;
export type JobEventType = (typeof JOB_EVENT_TYPES)[number];

export interface JobEvent {
  type: JobEventType;
  /** Epoch milliseconds. */
  at: number;
  jobId: string;
  jobType: string;
  queue: string;
  attempt: number;
  workerId?: string;
  timeoutKind: TimeoutKind;
  limitSeconds: number;
  elapsedSeconds: number;
}

const EVENT_OF_ERROR: Readonly<Record<string, { type: JobEventType; kind: TimeoutKind }>> = {
  timeout: { type: 'job.timeout', kind: 'execution' },
  stalled: { type: 'job.stalled', kind: 'stalled' },
  enqueue_ttl_expired: { type: 'job.ttl_expired', kind: 'enqueue_ttl' },
  total_timeout: { type: 'job.total_timeout', kind: 'total' },
};

/** The seconds an error detail records, or else the fallback rounded to whole seconds. */
function seconds(value: unknown, fallbackMs: number): number {
  return typeof value === 'number' ? value : Math.round(fallbackMs / 1000);
}

/**
 * The event that recording `error` on `job` stands for, or undefined when the
 * error is not a timeout. A timeout the server detected carries its limit
 * and elapsed time (timeouts.ts timeoutReport); one a worker reported may
 * not, and then the job's own limit and times fill in.
 */
export function timeoutEvent(job: Job, error: JobError, workerId: string | undefined): JobEvent | undefined {
  const known = EVENT_OF_ERROR[error.type];
  if (known === undefined) return undefined;
  const details = error.details ?? {};
  const limits: Record<TimeoutKind, number> = {
    execution: job.timeoutMs,
    stalled: job.heartbeatTimeoutMs,
    enqueue_ttl: job.enqueueTtlMs ?? 0,
    total: job.totalTimeoutMs ?? 0,
  };
  const since = known.kind === 'execution' || known.kind === 'stalled' ? (job.startedAt ?? job.createdAt) : job.createdAt;
  const event: JobEvent = {
    type: known.type,
    at: error.occurredAt,
    jobId: job.id,
    jobType: job.type,
    queue: job.queue,
    attempt: error.attempt,
    timeoutKind: known.kind,
    limitSeconds: seconds(details['limit_seconds'], limits[known.kind]),
    elapsedSeconds: seconds(details['elapsed_seconds'], error.occurredAt - since),
  };
  if (workerId !== undefined) event.workerId = workerId;
  return event;
}
