import {
  HandlerCode,
  JobState,
  OnExhaustion,
  type Job as WireJob,
  type JobError as WireJobError,
  type RetryPolicy as WireRetryPolicy,
} from '../gen/ojs/server/v1/job';

/**
 * A job's state, as the OJS specifications name it. "unspecified" and
 * "unrecognized" (a state added to the protocol after this SDK was built) are
 * what a newer or broken server could send.
 */
export type JobStateName =
  'scheduled' | 'available' | 'pending' | 'active' | 'completed' | 'retryable' | 'cancelled' | 'discarded' | 'unspecified' | 'unrecognized';
/** What a handler's error asked of the server ("unspecified" means retry). */
export type HandlerCodeName = 'retry' | 'discard' | 'dead_letter' | 'fail' | 'unspecified' | 'unrecognized';
/** Where a job goes when it may not be retried ("unspecified" means discard). */
export type OnExhaustionName = 'discard' | 'dead_letter' | 'unspecified' | 'unrecognized';

// One entry per generated enum value: a value added to the contract is a compile error here until named.
const JOB_STATE_NAMES: Record<JobState, JobStateName> = {
  [JobState.JOB_STATE_UNSPECIFIED]: 'unspecified',
  [JobState.JOB_STATE_SCHEDULED]: 'scheduled',
  [JobState.JOB_STATE_AVAILABLE]: 'available',
  [JobState.JOB_STATE_PENDING]: 'pending',
  [JobState.JOB_STATE_ACTIVE]: 'active',
  [JobState.JOB_STATE_COMPLETED]: 'completed',
  [JobState.JOB_STATE_RETRYABLE]: 'retryable',
  [JobState.JOB_STATE_CANCELLED]: 'cancelled',
  [JobState.JOB_STATE_DISCARDED]: 'discarded',
  [JobState.UNRECOGNIZED]: 'unrecognized',
};
const HANDLER_CODE_NAMES: Record<HandlerCode, HandlerCodeName> = {
  [HandlerCode.HANDLER_CODE_UNSPECIFIED]: 'unspecified',
  [HandlerCode.HANDLER_CODE_RETRY]: 'retry',
  [HandlerCode.HANDLER_CODE_DISCARD]: 'discard',
  [HandlerCode.HANDLER_CODE_DEAD_LETTER]: 'dead_letter',
  [HandlerCode.HANDLER_CODE_FAIL]: 'fail',
  [HandlerCode.UNRECOGNIZED]: 'unrecognized',
};
const ON_EXHAUSTION_NAMES: Record<OnExhaustion, OnExhaustionName> = {
  [OnExhaustion.ON_EXHAUSTION_UNSPECIFIED]: 'unspecified',
  [OnExhaustion.ON_EXHAUSTION_DISCARD]: 'discard',
  [OnExhaustion.ON_EXHAUSTION_DEAD_LETTER]: 'dead_letter',
  [OnExhaustion.UNRECOGNIZED]: 'unrecognized',
};

/** One error a job's attempt ended with. */
export interface JobError extends Omit<WireJobError, 'code' | 'details'> {
  code: HandlerCodeName;
  details: Record<string, unknown> | undefined;
}

/** A job's retry policy. */
export interface RetryPolicy extends Omit<WireRetryPolicy, 'onExhaustion'> {
  onExhaustion: OnExhaustionName;
}

/**
 * A job envelope as the server stores it, with its enums as names (`state:
 * 'completed'`) and its JSON values as `unknown`. Durations are in seconds,
 * as in the protocol.
 */
export interface Job extends Omit<
  WireJob,
  'state' | 'error' | 'errors' | 'retry' | 'args' | 'meta' | 'result' | 'progressData' | 'lastCheckpoint' | 'parentResults'
> {
  state: JobStateName;
  args: unknown[];
  meta: Record<string, unknown> | undefined;
  retry: RetryPolicy | undefined;
  /** The last error, if an attempt failed. */
  error: JobError | undefined;
  /** Every error, oldest first. */
  errors: JobError[];
  /** What the handler returned, once the job completed. */
  result: unknown;
  progressData: Record<string, unknown> | undefined;
  lastCheckpoint: unknown;
  /** A workflow job's parent results, on a delivered job only (the handler's `ctx.parentResults`). */
  parentResults: Record<string, unknown> | undefined;
}

/** The job as the SDK hands it out: the generated envelope with its enums named. */
export function jobFromWire(job: WireJob): Job {
  return {
    ...job,
    state: nameOf(JOB_STATE_NAMES, job.state),
    retry: job.retry === undefined ? undefined : { ...job.retry, onExhaustion: nameOf(ON_EXHAUSTION_NAMES, job.retry.onExhaustion) },
    error: job.error === undefined ? undefined : jobErrorFromWire(job.error),
    errors: job.errors.map(jobErrorFromWire),
  };
}

function jobErrorFromWire(error: WireJobError): JobError {
  return { ...error, code: nameOf(HANDLER_CODE_NAMES, error.code) };
}

/** The protocol's value of each OnExhaustion a job spec may name. */
export const ON_EXHAUSTION_VALUES: Readonly<Record<'discard' | 'dead_letter', OnExhaustion>> = {
  discard: OnExhaustion.ON_EXHAUSTION_DISCARD,
  dead_letter: OnExhaustion.ON_EXHAUSTION_DEAD_LETTER,
};

/** The name of an enum value; "unrecognized" for a number the generated enum does not know (decoded as is). */
export function nameOf<Value extends number, Name extends string>(names: Record<Value, Name>, value: Value): Name | 'unrecognized' {
  const name: Name | undefined = names[value];
  return name ?? 'unrecognized';
}
