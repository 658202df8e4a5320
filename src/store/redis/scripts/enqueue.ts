import { factText } from '../fact-codec';
import type { Job } from '../../../domain/job';
import { deadlineFields, encodeBody } from '../job-codec';
import { readStatus, readString } from '../reply';
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
  };
}

/** Stores new jobs, all or none (lua/enqueue.lua). A batch is built at one instant, its creation time. */
export const enqueueScript = declareScript({
  name: 'enqueue',
  encode: (jobs: readonly Job[]) => appendBatch([arg.int(jobs[0]?.createdAt ?? 0, 'now')], NEW_JOB_FIELDS, jobs, newJobFields),
  decode(reply): void {
    const { status, rest } = readStatus(reply, 'enqueue');
    if (status !== 'ok') throw refusalError({ status, jobId: readString(rest[0], 'duplicate job id') });
  },
});
