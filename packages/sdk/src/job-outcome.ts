import type { Job, JobError } from './job';

/**
 * A job waited for with `Producer.result()` was discarded: it failed for
 * good (attempts exhausted, a non-retryable error, a handler's discard or
 * dead-letter verdict) or expired. `error` is its last error, as the
 * worker reported it (or as the server recorded it, for a timeout or an
 * expiry); `job` is the discarded envelope, with every past error.
 */
export class JobFailedError extends Error {
  readonly jobId: string;
  /** The last error; undefined only if the server recorded none. */
  readonly error: JobError | undefined;
  /** Whether it went to the dead letter set, to be inspected and retried by an operator. */
  readonly isDeadLetter: boolean;

  constructor(readonly job: Job) {
    const last = job.error;
    const where = job.deadLetter ? ' into the dead letter set' : '';
    const when = job.attempt > 0 ? ` after attempt ${job.attempt}` : ' before it ran';
    const why = last === undefined ? 'no error recorded' : `${last.type}: ${last.message}`;
    super(`job ${job.id} (${job.type}) was discarded${where}${when}: ${why}`);
    this.name = 'JobFailedError';
    this.jobId = job.id;
    this.error = last;
    this.isDeadLetter = job.deadLetter;
  }
}

/** A job waited for with `Producer.result()` was cancelled. */
export class JobCancelledError extends Error {
  readonly jobId: string;

  constructor(readonly job: Job) {
    super(`job ${job.id} (${job.type}) was cancelled`);
    this.name = 'JobCancelledError';
    this.jobId = job.id;
  }
}

/**
 * `Producer.result()` gave up waiting: its `timeoutMs` passed before the job
 * finished. The job goes on; wait again, or cancel it.
 */
export class JobWaitTimeoutError extends Error {
  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
    /** The job as the server last described it during the wait, if it answered. */
    readonly job: Job | undefined,
  ) {
    const state = job === undefined ? '' : ` (still ${job.state})`;
    super(`job ${jobId} did not finish within ${timeoutMs} ms${state}`);
    this.name = 'JobWaitTimeoutError';
  }
}

/** The result of a finished job: its handler's return value, or the error saying why there is none. */
export function outcomeOf(job: Job): unknown {
  switch (job.state) {
    case 'completed':
      return job.result;
    case 'discarded':
      throw new JobFailedError(job);
    case 'cancelled':
      throw new JobCancelledError(job);
    case 'scheduled':
    case 'available':
    case 'pending':
    case 'active':
    case 'retryable':
    case 'unspecified':
    case 'unrecognized':
      throw new Error(`job ${job.id} is ${job.state}, not finished`);
  }
}
