import { factText } from '../fact-codec';
import type { Job } from '../../../domain/job';
import { deadlineFields, encodeBody } from '../job-codec';
import { uniqueConflict } from '../../../domain/errors';
import { uniqueUntil } from '../../../domain/unique-policy';
import type { EnqueueOutcome } from '../../job-store';
import { decodeTransition } from '../fact-codec';
import { readArray, readInteger, readStatus, readString, unexpectedReply } from '../reply';
import { readJob } from './replies';
import { appendBatch, arg, declareScript, type ScriptArg } from '../script';
import { refusalError } from '../script-errors';

/** The fields of a new job, in the order lua/enqueue.lua reads them. */
const NEW_JOB_FIELDS = [
  'id',
  'queue',
  'state',
  'priority',
  'discardAt',
  'ttlAt',
  'scheduledAt',
  'type',
  'vis',
  'tmo',
  'grace',
  'stall',
  'totalAt',
  'createdAt',
  'traceparent',
  'body',
  'uniqueKey',
  'uniqueStates',
  'uniqueUntil',
  'uniquePeriod',
  'uniqueConflict',
] as const;

/**
 * The scalar fields scripts work on, then the body JSON, so the body is
 * encoded once and a script neither splits strings nor decodes JSON.
 */
function newJobFields(job: Job): Record<(typeof NEW_JOB_FIELDS)[number], ScriptArg> {
  const { discardAt, ttlAt, totalAt } = deadlineFields(job);
  // Copied out of the body so that scripts record it in the job's facts without reading JSON.
  const traceparent = job.meta['traceparent'];
  return {
    id: arg.id(job.id, 'job id'),
    queue: arg.id(job.queue, 'job queue'),
    state: arg.id(job.state, 'job state'),
    priority: arg.int(job.priority, 'job priority'),
    discardAt: arg.optionalInt(discardAt, 'job discardAt'),
    ttlAt: arg.optionalInt(ttlAt, 'job ttlAt'),
    scheduledAt: arg.optionalInt(job.scheduledAt, 'job scheduledAt'),
    type: arg.id(job.type, 'job type'),
    vis: arg.int(job.visibilityTimeoutMs, 'job visibilityTimeoutMs'),
    tmo: arg.int(job.timeoutMs, 'job timeoutMs'),
    grace: arg.int(job.gracePeriodMs, 'job gracePeriodMs'),
    stall: arg.int(job.heartbeatTimeoutMs, 'job heartbeatTimeoutMs'),
    totalAt: arg.optionalInt(totalAt, 'job totalAt'),
    createdAt: arg.int(job.createdAt, 'job createdAt'),
    traceparent: typeof traceparent === 'string' ? factText(traceparent) : '',
    body: encodeBody(job),
    ...uniqueFields(job),
  };
}

/** A job's uniqueness key and what scripts need of its policy (lua/enqueue.lua); '' for a job without one. */
function uniqueFields(job: Job): Record<'uniqueKey' | 'uniqueStates' | 'uniqueUntil' | 'uniquePeriod' | 'uniqueConflict', ScriptArg> {
  if (job.unique === undefined) return { uniqueKey: '', uniqueStates: '', uniqueUntil: '', uniquePeriod: '', uniqueConflict: '' };
  const { key, policy } = job.unique;
  return {
    uniqueKey: arg.id(key, 'unique key'),
    uniqueStates: `,${policy.states.join(',')},`,
    uniqueUntil: arg.optionalInt(uniqueUntil(job), 'unique until'),
    uniquePeriod: arg.optionalInt(policy.periodMs, 'unique period'),
    uniqueConflict: arg.id(policy.onConflict, 'unique onConflict'),
  };
}

/** One job's outcome as lua/enqueue.lua answers it: stored, the existing job in its place, or stored replacing another. */
function readOutcome(value: unknown, job: Job): EnqueueOutcome {
  const [kind, payload] = readArray(value, 'enqueue outcome');
  if (kind === 'stored') return { job, deduplicated: false };
  if (kind === 'replaced') return { job, deduplicated: false, replaced: decodeTransition(payload) };
  if (kind !== 'existing') return unexpectedReply('enqueue outcome', value);
  const existing = readJob(payload);
  if (existing === undefined) return unexpectedReply('enqueue existing job', value);
  return { job: existing, deduplicated: true };
}

/** Stores new jobs, all or none (lua/enqueue.lua). A batch is built at one instant, its creation time. */
export const enqueueScript = declareScript({
  name: 'enqueue',
  encode: (jobs: readonly Job[]) => appendBatch([arg.int(jobs[0]?.createdAt ?? 0, 'now')], NEW_JOB_FIELDS, jobs, newJobFields),
  decode(reply, jobs): EnqueueOutcome[] {
    const { status, rest } = readStatus(reply, 'enqueue');
    if (status === 'unique') {
      const [index, holderId, holderState, key] = rest;
      throw uniqueConflict(
        `jobs[${readInteger(index, 'unique job index')}].unique`,
        readString(holderId, 'unique holder id'),
        readString(holderState, 'unique holder state'),
        readString(key, 'unique key'),
      );
    }
    if (status !== 'ok') throw refusalError({ status, jobId: readString(rest[0], 'duplicate job id') });
    return readArray(rest[0], 'enqueue outcomes').map((outcome, i) => readOutcome(outcome, jobs[i]!));
  },
});
