import { JOB_STATES, type Job, type JobState } from '../../../domain/job';
import type { QueueCounts, StateChange, WorkerSnapshot } from '../../job-store';
import { decodeJob } from '../job-codec';
import { decodeQueueLimits } from '../limits-codec';
import { readArray, readFlatHash, readInteger, readOneOf, readStatus, readString, readStrings, unexpectedReply } from '../reply';
import { refusalError } from '../script-errors';
import { decodeWorker } from '../worker-codec';

/**
 * Readers of the reply parts several scripts share (lib/ojs.lua builds
 * them in one place too). Transitions are facts: fact-codec.ts reads them.
 */

/** A job hash (HGETALL), or undefined for a job that does not exist. */
export function readJob(value: unknown): Job | undefined {
  return decodeJob(readFlatHash(value, 'job hash'));
}

/** Job hashes, leaving out jobs that do not exist. */
export function readJobs(value: unknown): Job[] {
  return readArray(value, 'jobs').flatMap((hash) => readJob(hash) ?? []);
}

/** A worker as lib/workers.lua workerSnapshot() returns it: {worker hash, {held job id...}}. */
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

/**
 * A queue as lib/ojs.lua queueSummary() returns it: {queue, counts hash,
 * paused (0/1), enqueue time of its oldest available job ('' for none),
 * its limits ('' for none)}.
 */
export function readQueueSummary(value: unknown): QueueCounts {
  const [name, hash, paused, oldest, limitsText] = readArray(value, 'queue summary');
  const counts = readFlatHash(hash, 'queue counts hash');
  const queue = readString(name, 'queue name');
  const count = (state: JobState): number => readInteger(counts[state] ?? '0', `queue ${queue} ${state} count`);
  const summary: QueueCounts = {
    queue,
    paused: readInteger(paused, 'queue paused') === 1,
    scheduled: count('scheduled'),
    available: count('available'),
    pending: count('pending'),
    active: count('active'),
    completed: count('completed'),
    retryable: count('retryable'),
    cancelled: count('cancelled'),
    discarded: count('discarded'),
  };
  const oldestAvailableAt = readString(oldest, 'queue oldest available');
  if (oldestAvailableAt !== '') summary.oldestAvailableAt = readInteger(oldestAvailableAt, 'queue oldest available');
  const limits = decodeQueueLimits(readString(limitsText, 'queue limits'));
  if (limits !== undefined) summary.limits = limits;
  return summary;
}
