import { HandlerCode, JobState, OnExhaustion, type Job, type JobError } from '../gen/ojs/server/v1/job';
import { enumMembersByName, enumName } from './enum-names';
import type { Output, Style } from './output';
import { exactAndRelativeTime, relativeTime } from './relative-time';
import { toWire } from './wire';

const JOB_STATE_PREFIX = 'JOB_STATE_';

/** Every job state by the name operators type ("discarded"). */
export const JOB_STATES_BY_NAME = enumMembersByName(JobState, JOB_STATE_PREFIX);

export function jobStateName(state: JobState): string {
  return enumName(JobState, JOB_STATE_PREFIX, state);
}

/** A job as `--json` prints it: the OJS envelope, enums by name ("state": "discarded"). */
export function jobJson(job: Job): unknown {
  return toWire({
    ...job,
    state: jobStateName(job.state),
    retry:
      job.retry === undefined
        ? undefined
        : { ...job.retry, onExhaustion: enumName(OnExhaustion, 'ON_EXHAUSTION_', job.retry.onExhaustion) },
    error: job.error === undefined ? undefined : jobErrorJson(job.error),
    errors: job.errors.map(jobErrorJson),
  });
}

function jobErrorJson(error: JobError): JobError | Record<string, unknown> {
  return { ...error, code: enumName(HandlerCode, 'HANDLER_CODE_', error.code) };
}

const STATE_STYLES: Partial<Record<JobState, Style>> = {
  [JobState.JOB_STATE_COMPLETED]: 'green',
  [JobState.JOB_STATE_ACTIVE]: 'cyan',
  [JobState.JOB_STATE_RETRYABLE]: 'yellow',
  [JobState.JOB_STATE_DISCARDED]: 'red',
  [JobState.JOB_STATE_CANCELLED]: 'dim',
};

export function paintedState(output: Output, state: JobState): string {
  const style = STATE_STYLES[state];
  return style === undefined ? jobStateName(state) : output.paint(style, jobStateName(state));
}

/** Jobs as one aligned table, newest first as listed. */
export function printJobTable(output: Output, jobs: Job[], nowMs: number): void {
  output.table(
    ['ID', 'TYPE', 'QUEUE', 'STATE', 'ATTEMPT', 'CREATED', 'LAST ERROR'],
    jobs.map((job) => [
      job.id,
      job.type,
      job.queue,
      paintedState(output, job.state),
      String(job.attempt),
      relativeTime(job.createdAt, nowMs),
      job.error === undefined ? '' : job.error.type,
    ]),
  );
}

/** One job, field by field, for `jobs get` and `jobs wait`. */
export function printJob(output: Output, job: Job, nowMs: number): void {
  const when = (at: Date | undefined): string => exactAndRelativeTime(at, nowMs);
  const fields: [string, string][] = [
    ['id', job.id],
    ['type', job.type],
    ['queue', job.queue],
    ['state', paintedState(output, job.state) + (job.deadLetter ? ' (dead letter)' : '')],
    ['priority', String(job.priority)],
    ['attempt', `${job.attempt} of ${job.retry?.maxAttempts ?? '?'}`],
    ['args', JSON.stringify(job.args)],
    ['created', when(job.createdAt)],
  ];
  const optional: [string, string | undefined][] = [
    ['meta', job.meta === undefined || Object.keys(job.meta).length === 0 ? undefined : JSON.stringify(job.meta)],
    ['scheduled', job.scheduledAt && when(job.scheduledAt)],
    ['started', job.startedAt && when(job.startedAt)],
    ['finished', job.completedAt && when(job.completedAt)],
    ['next retry', job.nextRetryAt && when(job.nextRetryAt)],
    ['worker', job.workerId === '' ? undefined : job.workerId],
    ['progress', job.progress === undefined ? undefined : `${Math.round(job.progress * 100)}%`],
    ['result', job.result === undefined ? undefined : JSON.stringify(job.result)],
    ['error', job.error && `${job.error.type}: ${job.error.message}`],
    ['errors', job.errors.length === 0 ? undefined : String(job.errors.length)],
  ];
  for (const [name, value] of optional) if (value !== undefined) fields.push([name, value]);
  output.fields(fields);
}
