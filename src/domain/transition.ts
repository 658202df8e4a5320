import type { Job, JobState } from './job';
import type { WorkerState } from './worker';

/** One job changing state: what telemetry records for every transition. */
export interface JobTransition {
  jobId: string;
  type: string;
  queue: string;
  from: JobState | 'none';
  to: JobState;
  attempt: number;
  workerId?: string;
  /** When the attempt started: for a job entering or leaving active. */
  startedAt?: number;
  /** When the job became available: for a job entering active. */
  enqueuedAt?: number;
  /** The error the transition recorded, for an attempt that failed. */
  errorType?: string;
}

/** One worker changing state; "none" before registration, "terminated" after removal. */
export interface WorkerTransition {
  workerId: string;
  from: WorkerState | 'none';
  to: WorkerState | 'terminated';
  /** Why, for removals: "deregistered" or "dead". */
  reason?: string;
}

/** The transition that produced `job` from a job in state `from`. */
export function transitionOf(job: Job, from: JobState | 'none', workerId?: string): JobTransition {
  const record: JobTransition = { jobId: job.id, type: job.type, queue: job.queue, from, to: job.state, attempt: job.attempt };
  const holder = workerId ?? job.lease?.workerId;
  if (holder !== undefined) record.workerId = holder;
  if (job.state === 'active') {
    record.startedAt = job.startedAt;
    record.enqueuedAt = job.enqueuedAt;
  } else if (from === 'active') {
    record.startedAt = job.startedAt;
  }
  return record;
}
