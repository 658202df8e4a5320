import { decodeTransition, factText } from '../fact-codec';
import type { Job } from '../../../domain/job';
import { scheduleNameProblem } from '../../../domain/schedule';
import { CRON_NAME_META } from '../../../domain/schedule-tick';
import { deadlineFields, encodeBody } from '../job-codec';
import { uniqueUntil } from '../../../domain/unique-policy';
import type { EnqueueOutcome } from '../../job-store';
import { readArray, unexpectedReply } from '../reply';
import { readJob } from './replies';
import { arg, type ScriptArg } from '../script';

/** The fields of a new job, in the order lua/lib/new-jobs.lua reads them. */
export const NEW_JOB_FIELDS = [
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
  'cron',
  'workflow',
] as const;

/**
 * The scalar fields scripts work on, then the body JSON, so the body is
 * encoded once and a script neither splits strings nor decodes JSON.
 */
export function newJobFields(job: Job): Record<(typeof NEW_JOB_FIELDS)[number], ScriptArg> {
  const { discardAt, ttlAt, totalAt } = deadlineFields(job);
  // Copied out of the body so that scripts record it in the job's facts without reading JSON.
  const traceparent = job.meta['traceparent'];
  // Copied for the same reason, so that a listing can select a schedule's jobs (JobFilter.schedule).
  const cronName = job.meta[CRON_NAME_META];
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
    cron: typeof cronName === 'string' && scheduleNameProblem(cronName) === undefined ? cronName : '',
    // Copied for the scripts that advance the job's workflow when it finishes, and for listings (JobFilter.workflow).
    workflow: job.workflow === undefined ? '' : `${arg.id(job.workflow.id, 'workflow id')}|${arg.int(job.workflow.node, 'workflow node')}`,
  };
}

/** A job's uniqueness key and what scripts need of its policy (lua/lib/new-jobs.lua); '' for a job without one. */
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

/** One job's outcome as lua/lib/new-jobs.lua answers it: stored, the existing job in its place, or stored replacing another. */
export function readNewJobOutcome(value: unknown, job: Job): EnqueueOutcome {
  const [kind, payload] = readArray(value, 'enqueue outcome');
  if (kind === 'stored') return { job, deduplicated: false };
  if (kind === 'replaced') return { job, deduplicated: false, replaced: decodeTransition(payload) };
  if (kind !== 'existing') return unexpectedReply('enqueue outcome', value);
  const existing = readJob(payload);
  if (existing === undefined) return unexpectedReply('enqueue existing job', value);
  return { job: existing, deduplicated: true };
}
