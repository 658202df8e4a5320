import { decodeTransition, encodeJobFact, factText } from '../fact-codec';
import type { Job } from '../../../domain/job';
import { scheduleNameProblem } from '../../../domain/schedule';
import { CRON_NAME_META } from '../../../domain/schedule-tick';
import { transitionOf } from '../../../domain/transition';
import { deadlineFields, encodeBody } from '../job-codec';
import { uniqueUntil } from '../../../domain/unique-policy';
import type { EnqueueOutcome } from '../../job-store';
import { readArray, unexpectedReply } from '../reply';
import { readJob } from './replies';
import { arg, type ScriptArg, type ScriptSettings } from '../script';

/**
 * Appends a batch of new jobs as lua/lib/new-jobs.lua reads it: the job
 * count, then per job its head (what the script works with) and its hash
 * (the fields job-codec.ts reads, whole: those every job holds as values
 * alone, the others as field, value pairs). `now` is the script's: the
 * jobs made available are enqueued then, and their facts are recorded then.
 */
export function appendNewJobs(args: ScriptArg[], jobs: readonly Job[], now: number, settings: ScriptSettings): ScriptArg[] {
  args.push(jobs.length);
  for (const job of jobs) appendNewJob(args, job, now, settings);
  return args;
}

function appendNewJob(args: ScriptArg[], job: Job, now: number, settings: ScriptSettings): void {
  const { discardAt, ttlAt, totalAt } = deadlineFields(job);
  const unique = uniqueHead(job);
  args.push(
    arg.id(job.id, 'job id'),
    // The deadline of a job that never ran (domain waitingDeadline): its enqueue TTL counts.
    arg.optionalInt(discardAt === undefined ? ttlAt : Math.min(discardAt, ttlAt ?? discardAt), 'job waiting deadline'),
    arg.optionalInt(job.state === 'scheduled' ? job.scheduledAt : undefined, 'job scheduledAt'),
    settings.eventLogLength > 0 ? encodeJobFact(transitionOf(job, 'none', now)) : '',
    unique.key,
    unique.states,
    unique.until,
    unique.period,
    unique.conflict,
    // The fields every job holds, by position, without their names (lua/lib/new-jobs.lua storeNewJob names them):
    // body, type, queue, priority, createdAt, vis, tmo, grace, stall, state.
    encodeBody(job),
    arg.id(job.type, 'job type'),
    arg.id(job.queue, 'job queue'),
    arg.int(job.priority, 'job priority'),
    arg.int(job.createdAt, 'job createdAt'),
    arg.int(job.visibilityTimeoutMs, 'job visibilityTimeoutMs'),
    arg.int(job.timeoutMs, 'job timeoutMs'),
    arg.int(job.gracePeriodMs, 'job gracePeriodMs'),
    arg.int(job.heartbeatTimeoutMs, 'job heartbeatTimeoutMs'),
    arg.id(job.state, 'job state'),
  );
  const countAt = args.length;
  args.push(0);
  const field = (name: string, value: ScriptArg): void => {
    args.push(name, value);
  };
  const optional = (name: string, value: ScriptArg | undefined): void => {
    if (value !== undefined && value !== '') args.push(name, value);
  };
  if (job.state === 'available') field('enqueuedAt', arg.int(now, 'now'));
  optional('discardAt', arg.optionalInt(discardAt, 'job discardAt'));
  optional('ttlAt', arg.optionalInt(ttlAt, 'job ttlAt'));
  optional('scheduledAt', arg.optionalInt(job.scheduledAt, 'job scheduledAt'));
  optional('totalAt', arg.optionalInt(totalAt, 'job totalAt'));
  // Copied out of the body so that scripts record it in the job's facts without reading JSON.
  const traceparent = job.meta['traceparent'];
  if (typeof traceparent === 'string') optional('tp', factText(traceparent));
  if (job.unique !== undefined) {
    field('uk', unique.key);
    field('us', unique.states);
    optional('uu', unique.until);
  }
  // Copied for the same reason, so that a listing can select a schedule's jobs (JobFilter.schedule).
  const cronName = job.meta[CRON_NAME_META];
  if (typeof cronName === 'string' && scheduleNameProblem(cronName) === undefined) field('cron', cronName);
  // Copied for the scripts that advance the job's workflow when it finishes, and for listings (JobFilter.workflow).
  if (job.workflow !== undefined) {
    field('wf', `${arg.id(job.workflow.id, 'workflow id')}|${arg.int(job.workflow.node, 'workflow node')}`);
  }
  args[countAt] = args.length - countAt - 1;
}

/** A job's uniqueness key and what scripts need of its policy (lua/lib/new-jobs.lua); '' for a job without one. */
function uniqueHead(job: Job): Record<'key' | 'states' | 'until' | 'period' | 'conflict', ScriptArg> {
  if (job.unique === undefined) return { key: '', states: '', until: '', period: '', conflict: '' };
  const { key, policy } = job.unique;
  return {
    key: arg.id(key, 'unique key'),
    states: `,${policy.states.join(',')},`,
    until: arg.optionalInt(uniqueUntil(job), 'unique until'),
    period: arg.optionalInt(policy.periodMs, 'unique period'),
    conflict: arg.id(policy.onConflict, 'unique onConflict'),
  };
}

/** One job's outcome as lua/lib/new-jobs.lua answers it: stored, the existing job in its place, or stored replacing another. */
export function readNewJobOutcome(value: unknown, job: Job): EnqueueOutcome {
  if (value === 'stored') return { job, deduplicated: false };
  const [kind, payload] = readArray(value, 'enqueue outcome');
  if (kind === 'replaced') return { job, deduplicated: false, replaced: decodeTransition(payload) };
  if (kind !== 'existing') return unexpectedReply('enqueue outcome', value);
  const existing = readJob(payload);
  if (existing === undefined) return unexpectedReply('enqueue existing job', value);
  return { job: existing, deduplicated: true };
}
