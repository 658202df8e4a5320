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
  storeFull,
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

const LEASE_PROBLEMS = ['not_active', 'other_worker', 'stale_lease'] as const satisfies readonly LeaseProblem[];

/** The one switch from script status codes to OjsErrors. */
export function refusalError(refusal: ScriptRefusal): OjsError {
  const { status, jobId = '', workerId = '', state = '' } = refusal;
  const leaseProblem = LEASE_PROBLEMS.find((problem) => problem === status);
  if (leaseProblem !== undefined) return leaseNotHeld(jobId, leaseProblem, state);
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
 * Redis refusals that say Redis cannot serve now but may soon: a script
 * running too long (BUSY), a dataset loading after a restart (LOADING), a
 * replica or a cluster in failover (READONLY, MASTERDOWN, CLUSTERDOWN,
 * TRYAGAIN), too few replicas for a write (NOREPLICAS).
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'BUSY',
  'LOADING',
  'READONLY',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'NOREPLICAS',
]);

/**
 * A failed Redis call as an OjsError, in one switch over what Redis said:
 * - OOM: Redis reached maxmemory; the store is full (retryable RESOURCE_EXHAUSTED);
 * - a refusal of UNAVAILABLE_CODES: unavailable, clients may retry;
 * - any other reply error (a script's BADARG among them): a bug, `backend_error` with the reply as its cause;
 * - anything else (connection refused or lost, a timeout, offline): unavailable.
 */
export function redisFailure(error: unknown): OjsError {
  if (error instanceof OjsError) return error;
  if (!(error instanceof ReplyError) || !(error instanceof Error)) return backendUnavailable('Redis', error);
  // A reply error starts with its code: "OOM command not allowed when used memory > 'maxmemory'."
  const code = error.message.split(' ', 1)[0] ?? '';
  if (code === 'OOM') return storeFull('redis_maxmemory', 'Redis reached its maxmemory limit', error);
  if (UNAVAILABLE_CODES.has(code)) return backendUnavailable('Redis', error);
  return new OjsError('backend_error', 'Redis refused a command', { cause: error });
}
