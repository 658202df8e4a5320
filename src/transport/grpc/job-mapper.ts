import type { Job, JobError } from '../../domain/job';
import { assertField } from '../../domain/errors';
import type { JobSubmission } from '../../domain/job-submission';
import type { FailureReportInput } from '../../domain/settlement-checks';
import {
  DEFAULT_RETRY_POLICY,
  describeRetryPolicy,
  isDefaultRetryPolicy,
  type RetryPolicy,
  type RetryPolicyInput,
} from '../../domain/retry-policy';
import { describeUniquePolicy, type UniquePolicyInput } from '../../domain/unique-policy';
import {
  Job as ProtoJob,
  type JobError as ProtoJobError,
  type RetryPolicy as ProtoRetryPolicy,
  type UniquePolicy as ProtoUniquePolicy,
} from '../../../gen/ojs/server/v1/job';
import { fromProtoHandlerCode, fromProtoOnExhaustion, toProtoHandlerCode, toProtoJobState, toProtoOnExhaustion } from './enum-mapping';
import { fromDate, toDate } from './time-mapping';

/**
 * Reads the producer-settable fields of an envelope; system-managed ones are
 * dropped here. Values are passed on as decoded: the domain checks them.
 * `path` names the envelope in the request ("jobs[0]", "schedule.template").
 */
export function toSubmission(job: ProtoJob, path: string): JobSubmission {
  const submission: JobSubmission = {
    specversion: job.specversion,
    id: job.id,
    type: job.type,
    queue: job.queue,
    args: job.args,
    priority: job.priority,
    timeoutSeconds: job.timeout,
    visibilityTimeoutSeconds: job.visibilityTimeout,
    schema: job.schema,
    totalTimeoutSeconds: job.totalTimeout,
    enqueueTtlSeconds: job.enqueueTtl,
    heartbeatTimeoutSeconds: job.heartbeatTimeout,
  };
  if (job.gracePeriod !== undefined) submission.gracePeriodSeconds = job.gracePeriod;
  if (job.meta !== undefined) submission.meta = job.meta;
  if (job.scheduledAt !== undefined) submission.scheduledAt = fromDate(job.scheduledAt)!;
  if (job.expiresAt !== undefined) submission.expiresAt = fromDate(job.expiresAt)!;
  if (job.retry !== undefined) submission.retry = toRetryInput(job.retry, `${path}.retry`);
  if (job.unique !== undefined) submission.unique = toUniqueInput(job.unique);
  return submission;
}

/**
 * A submission as an envelope again (a schedule's template, as it was
 * registered): only the producer-settable fields; the rest at their zero.
 */
export function toProtoTemplate(submission: JobSubmission): ProtoJob {
  const { retry, unique } = submission;
  return ProtoJob.fromPartial({
    specversion: submission.specversion ?? '',
    id: submission.id ?? '',
    type: submission.type,
    queue: submission.queue ?? '',
    args: submission.args,
    meta: submission.meta,
    priority: submission.priority ?? 0,
    timeout: submission.timeoutSeconds ?? 0,
    scheduledAt: toDate(submission.scheduledAt),
    expiresAt: toDate(submission.expiresAt),
    visibilityTimeout: submission.visibilityTimeoutSeconds ?? 0,
    schema: submission.schema ?? '',
    totalTimeout: submission.totalTimeoutSeconds ?? 0,
    enqueueTtl: submission.enqueueTtlSeconds ?? 0,
    gracePeriod: submission.gracePeriodSeconds,
    heartbeatTimeout: submission.heartbeatTimeoutSeconds ?? 0,
    retry: retry === undefined ? undefined : { ...retry, onExhaustion: retry.onExhaustion && toProtoOnExhaustion(retry.onExhaustion) },
    // Copies: the generated envelope's lists are mutable.
    unique:
      unique === undefined
        ? undefined
        : {
            ...unique,
            keys: unique.keys && [...unique.keys],
            argsKeys: unique.argsKeys && [...unique.argsKeys],
            metaKeys: unique.metaKeys && [...unique.metaKeys],
            states: unique.states && [...unique.states],
          },
  });
}

/** A unique policy as sent: empty lists and strings are absent fields (the domain applies the defaults). */
function toUniqueInput(unique: ProtoUniquePolicy): UniquePolicyInput {
  const input: UniquePolicyInput = {};
  if (unique.keys.length > 0) input.keys = unique.keys;
  if (unique.argsKeys.length > 0) input.argsKeys = unique.argsKeys;
  if (unique.metaKeys.length > 0) input.metaKeys = unique.metaKeys;
  if (unique.period !== '') input.period = unique.period;
  if (unique.states.length > 0) input.states = unique.states;
  if (unique.onConflict !== '') input.onConflict = unique.onConflict;
  return input;
}

function toRetryInput(retry: ProtoRetryPolicy, path: string): RetryPolicyInput {
  const input: RetryPolicyInput = {};
  if (retry.maxAttempts !== undefined) input.maxAttempts = retry.maxAttempts;
  if (retry.initialInterval !== undefined) input.initialInterval = retry.initialInterval;
  if (retry.backoffCoefficient !== undefined) input.backoffCoefficient = retry.backoffCoefficient;
  if (retry.maxInterval !== undefined) input.maxInterval = retry.maxInterval;
  if (retry.jitter !== undefined) input.jitter = retry.jitter;
  if (retry.nonRetryableErrors.length > 0) input.nonRetryableErrors = retry.nonRetryableErrors;
  const onExhaustion = fromProtoOnExhaustion(retry.onExhaustion);
  if (onExhaustion !== undefined) input.onExhaustion = onExhaustion;
  else assertField(`${path}.on_exhaustion`, unknownEnumProblem(retry.onExhaustion));
  return input;
}

/** A failure as a worker reports it; `path` names the error field in the request. */
export function toFailureReport(error: ProtoJobError | undefined, path: string): FailureReportInput {
  const report: FailureReportInput = { type: error?.type ?? '', message: error?.message ?? '', backtrace: error?.backtrace ?? [] };
  if (error === undefined) return report;
  const code = fromProtoHandlerCode(error.code);
  if (code !== undefined) report.code = code;
  else assertField(`${path}.code`, unknownEnumProblem(error.code));
  if (error.details !== undefined) report.details = error.details;
  return report;
}

/** An enum field's value is 0 (unspecified) or one the contract names; anything else is refused. */
function unknownEnumProblem(value: number): string | undefined {
  return value === 0 ? undefined : `${value} is not a value of this enum`;
}

export function toProtoJob(job: Job): ProtoJob {
  return {
    specversion: job.specversion,
    id: job.id,
    type: job.type,
    queue: job.queue,
    args: job.args,
    meta: job.meta,
    priority: job.priority,
    timeout: seconds(job.timeoutMs),
    scheduledAt: toDate(job.scheduledAt),
    expiresAt: toDate(job.expiresAt),
    retry: toProtoRetryPolicy(job),
    visibilityTimeout: seconds(job.visibilityTimeoutMs),
    schema: job.schema ?? '',
    totalTimeout: seconds(job.totalTimeoutMs),
    enqueueTtl: seconds(job.enqueueTtlMs),
    gracePeriod: seconds(job.gracePeriodMs),
    heartbeatTimeout: seconds(job.heartbeatTimeoutMs),
    unique: job.unique === undefined ? undefined : describeUniquePolicy(job.unique.policy),
    state: toProtoJobState(job.state),
    attempt: job.attempt,
    createdAt: toDate(job.createdAt),
    enqueuedAt: toDate(job.enqueuedAt),
    startedAt: toDate(job.startedAt),
    completedAt: toDate(job.completedAt),
    error: job.error === undefined ? undefined : toProtoJobError(job.error),
    errors: job.errors.map(toProtoJobError),
    result: job.result,
    nextRetryAt: toDate(job.nextRetryAt),
    workerId: job.lease?.workerId ?? '',
    deadLetter: job.deadLetter,
    progress: job.progress,
    progressData: job.progressData,
    lastCheckpoint: job.lastCheckpoint,
    workflowId: job.workflow?.id ?? '',
    workflowStep: job.workflow?.step ?? '',
    // Only deliveries carry them (job-wire.ts writeDelivery): they can be as large as the job itself.
    parentResults: undefined,
  };
}

/** A duration in whole seconds, as the envelope has it (rounded). */
export function seconds(ms: number | undefined): number {
  return ms === undefined ? 0 : Math.round(ms / 1000);
}

/** A retry policy as envelopes carry it. */
export function describePolicy(policy: RetryPolicy): ProtoRetryPolicy {
  const described = describeRetryPolicy(policy);
  return { ...described, onExhaustion: toProtoOnExhaustion(described.onExhaustion) };
}

/** Most jobs carry the default policy: describe it once (encoding never changes the object). */
export const DEFAULT_PROTO_RETRY_POLICY = describePolicy(DEFAULT_RETRY_POLICY);

function toProtoRetryPolicy(job: Job): ProtoRetryPolicy {
  return isDefaultRetryPolicy(job.retry) ? DEFAULT_PROTO_RETRY_POLICY : describePolicy(job.retry);
}

export function toProtoJobError(error: JobError): ProtoJobError {
  return {
    type: error.type,
    message: error.message,
    backtrace: error.backtrace,
    code: toProtoHandlerCode(error.code),
    details: error.details,
    attempt: error.attempt,
    occurredAt: toDate(error.occurredAt),
  };
}
