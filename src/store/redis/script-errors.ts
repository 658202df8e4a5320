// ioredis declares ReplyError as `any`; it is the class of errors Redis itself replies with.
import { ReplyError } from 'ioredis';
import {
  backendUnavailable,
  duplicateJob,
  duplicateWorker,
  invalidTransition,
  jobNotFound,
  leaseNotHeld,
  OjsError,
  workerNotFound,
  type LeaseProblem,
} from '../../domain/errors';

/** What a script refused, and about what, as it returns it (first element of its reply). */
export interface ScriptRefusal {
  status: string;
  jobId?: string;
  workerId?: string;
  /** The job's state when it matters (lease problems, invalid transitions). */
  state?: string;
  /** For invalid transitions: the state the caller wanted. */
  wanted?: string;
}

const LEASE_PROBLEMS: ReadonlySet<string> = new Set<LeaseProblem>(['not_active', 'other_worker', 'stale_lease']);

/** The one switch from script status codes to OjsErrors. */
export function refusalError(refusal: ScriptRefusal): OjsError {
  const { status, jobId = '', workerId = '', state = '' } = refusal;
  if (LEASE_PROBLEMS.has(status)) return leaseNotHeld(jobId, status as LeaseProblem, state);
  switch (status) {
    case 'not_found':
      return jobId !== '' ? jobNotFound(jobId) : workerNotFound(workerId);
    case 'duplicate':
      return jobId !== '' ? duplicateJob(jobId) : duplicateWorker(workerId);
    case 'invalid_state':
      return invalidTransition(jobId, state, refusal.wanted ?? '');
    default:
      return new OjsError('backend_error', `unexpected script status ${status}`);
  }
}

/**
 * A failed Redis call as an OjsError: a reply error is a bug (INTERNAL);
 * anything else (connection refused or lost, timeout, offline) means Redis
 * is unavailable, which clients may retry.
 */
export function redisFailure(error: unknown): OjsError {
  if (error instanceof OjsError) return error;
  if (error instanceof (ReplyError as new () => Error)) return new OjsError('backend_error', 'Redis refused a command', { cause: error });
  return backendUnavailable('Redis', error);
}
