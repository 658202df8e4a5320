import type { Job } from '../../../domain/job';
import { JOB_STATES } from '../../../domain/job';
import type { JobTransition } from '../../../domain/transition';
import type { StateChange, WorkerSnapshot } from '../../job-store';
import { decodeJob } from '../job-codec';
import { readArray, readFlatHash, readInteger, readOneOf, readStatus, readString, readStrings, unexpectedReply } from '../reply';
import { refusalError } from '../script-errors';
import { decodeWorker } from '../worker-codec';

/**
 * Readers of the reply parts several scripts share (lib/ojs.lua builds
 * them in one place too).
 */

/** A transition as lib/ojs.lua transition() builds it: id, type, queue, from, to, attempt, worker, started at ('' for none). */
export function readTransition(value: unknown): JobTransition {
  const [jobId, type, queue, from, to, attempt, workerId, startedAt] = readArray(value, 'transition');
  const transition: JobTransition = {
    jobId: readString(jobId, 'transition job id'),
    type: readString(type, 'transition type'),
    queue: readString(queue, 'transition queue'),
    from: readOneOf(from, JOB_STATES, 'transition from'),
    to: readOneOf(to, JOB_STATES, 'transition to'),
    attempt: readInteger(attempt, 'transition attempt'),
  };
  const worker = readString(workerId, 'transition worker');
  if (worker !== '') transition.workerId = worker;
  const started = readString(startedAt, 'transition startedAt');
  if (started !== '') transition.startedAt = readInteger(started, 'transition startedAt');
  return transition;
}

export function readTransitions(value: unknown): JobTransition[] {
  return readArray(value, 'transitions').map(readTransition);
}

/** A job hash (HGETALL), or undefined for a job that does not exist. */
export function readJob(value: unknown): Job | undefined {
  return decodeJob(readFlatHash(value, 'job hash'));
}

/** Job hashes, leaving out jobs that do not exist. */
export function readJobs(value: unknown): Job[] {
  return readArray(value, 'jobs').flatMap((hash) => readJob(hash) ?? []);
}

/** A worker as lib/ojs.lua workerSnapshot() returns it: {worker hash, {held job id...}}. */
export function readWorkerSnapshot(value: unknown): WorkerSnapshot {
  const [hash, held] = readArray(value, 'worker snapshot');
  return { worker: decodeWorker(readFlatHash(hash, 'worker hash')), heldJobIds: readStrings(held, 'held job ids') };
}

/**
 * The reply of a manual transition (cancel, make-available): {'ok',
 * previous state, previous holder, job hash}, or a refusal ({'not_found'},
 * {'invalid_state', state}) thrown as its OjsError.
 */
export function readStateChange(value: unknown, jobId: string, wanted: string): StateChange {
  const { status, rest } = readStatus(value, 'state change');
  if (status !== 'ok') throw refusalError({ status, jobId, state: rest[0] === undefined ? '' : readString(rest[0], 'state'), wanted });
  const [from, holder, hash] = rest;
  const job = readJob(hash);
  if (job === undefined) return unexpectedReply('changed job', hash);
  const change: StateChange = { job, from: readOneOf(from, JOB_STATES, 'previous state') };
  const workerId = readString(holder, 'previous holder');
  if (workerId !== '') change.workerId = workerId;
  return change;
}
