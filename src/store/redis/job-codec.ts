import { JOB_STATES, type HandlerCode, type Job, type JobError, type JobState, type WorkflowLink } from '../../domain/job';
import { isTerminal } from '../../domain/job-state-machine';
import { leaseToken } from '../../domain/lease';
import type { JsonObject, JsonValue } from '../../domain/json';
import { UNIQUE_CONFLICTS, UNIQUE_DIMENSIONS, type UniqueConstraint, type UniquePolicy } from '../../domain/job';
import { DEFAULT_RETRY_POLICY, isDefaultRetryPolicy, type OnExhaustion, type RetryPolicy } from '../../domain/retry-policy';
import { FIELD_SEPARATOR } from './fact-codec';
import {
  readBoolean,
  readInteger,
  readJson,
  readJsonArray,
  readJsonObject,
  readKeyOf,
  readNumber,
  readOneOf,
  readOptionalNumberText,
  readString,
  readStrings,
  unexpectedReply,
} from './reply';

/**
 * A job as a Redis hash. What never changes after enqueue is one JSON field
 * (`body`) that only TypeScript reads; scripts work on the scalar fields
 * (state, attempt, lease...) and on copies of the few body values they need
 * (type, queue, priority, scheduledAt, the timeout limits and the
 * deadlines derived from them). Errors, results, progress data and
 * checkpoints are JSON strings built here, so Lua never parses user data.
 */
interface JobBody {
  specversion: string;
  id: string;
  type: string;
  queue: string;
  args: JsonValue[];
  meta: JsonObject;
  priority: number;
  timeoutMs: number;
  gracePeriodMs: number;
  heartbeatTimeoutMs: number;
  totalTimeoutMs?: number;
  enqueueTtlMs?: number;
  scheduledAt?: number;
  expiresAt?: number;
  /** Absent when it is the default policy (a constant), which is most jobs. */
  retry?: RetryPolicy;
  visibilityTimeoutMs: number;
  schema?: string;
  unique?: UniqueConstraint;
  createdAt: number;
  workflow?: WorkflowLink;
}

const HANDLER_CODES: Readonly<Record<HandlerCode, true>> = { retry: true, discard: true, dead_letter: true, fail: true };
const ON_EXHAUSTION: Readonly<Record<OnExhaustion, true>> = { discard: true, dead_letter: true };

/**
 * The body JSON of a new job. Every field is in the literal, an absent one
 * as undefined (which JSON leaves out): one fixed shape, where adding the
 * optional ones as they came made a new shape for each combination and
 * took JSON.stringify off its fast path (about half of what writing a
 * body cost).
 */
export function encodeBody(job: Job): string {
  const body: JobBody = {
    specversion: job.specversion,
    id: job.id,
    type: job.type,
    queue: job.queue,
    args: job.args,
    meta: job.meta,
    priority: job.priority,
    timeoutMs: job.timeoutMs,
    gracePeriodMs: job.gracePeriodMs,
    heartbeatTimeoutMs: job.heartbeatTimeoutMs,
    visibilityTimeoutMs: job.visibilityTimeoutMs,
    createdAt: job.createdAt,
    totalTimeoutMs: job.totalTimeoutMs,
    enqueueTtlMs: job.enqueueTtlMs,
    retry: isDefaultRetryPolicy(job.retry) ? undefined : job.retry,
    scheduledAt: job.scheduledAt,
    expiresAt: job.expiresAt,
    schema: job.schema,
    unique: job.unique,
    workflow: job.workflow,
  };
  return JSON.stringify(body);
}

/**
 * The deadlines of a job as its hash keeps them, for the scripts' mirror of
 * domain waitingDeadline and softTimeoutAt: `discardAt`, the part of the
 * waiting deadline that never changes (expires_at, total timeout);
 * `ttlAt`, the enqueue TTL, which applies only before the first attempt;
 * `totalAt`, the total timeout.
 */
export function deadlineFields(job: Job): { discardAt?: number; ttlAt?: number; totalAt?: number } {
  const totalAt = job.totalTimeoutMs === undefined ? undefined : job.createdAt + job.totalTimeoutMs;
  const discardAt = job.expiresAt === undefined ? totalAt : Math.min(job.expiresAt, totalAt ?? Infinity);
  const ttlAt = job.enqueueTtlMs === undefined ? undefined : job.createdAt + job.enqueueTtlMs;
  return { discardAt, ttlAt, totalAt };
}

function readRetryPolicy(value: JsonValue | undefined): RetryPolicy {
  const policy = readJsonObject(value, 'job body retry');
  return {
    maxAttempts: readNumber(policy['maxAttempts'], 'retry maxAttempts'),
    initialIntervalMs: readNumber(policy['initialIntervalMs'], 'retry initialIntervalMs'),
    backoffCoefficient: readNumber(policy['backoffCoefficient'], 'retry backoffCoefficient'),
    maxIntervalMs: readNumber(policy['maxIntervalMs'], 'retry maxIntervalMs'),
    jitter: readBoolean(policy['jitter'], 'retry jitter'),
    nonRetryableErrors: readStrings(policy['nonRetryableErrors'], 'retry nonRetryableErrors'),
    onExhaustion: readKeyOf(policy['onExhaustion'], ON_EXHAUSTION, 'retry onExhaustion'),
  };
}

/** A unique constraint as encodeBody wrote it (checked by the domain at enqueue). */
function readUniqueConstraint(value: JsonValue | undefined): UniqueConstraint {
  const fields = readJsonObject(value, 'job body unique');
  const policy = readJsonObject(fields['policy'], 'unique policy');
  const read: UniquePolicy = {
    keys: readStrings(policy['keys'], 'unique keys').map((key) => readOneOf(key, UNIQUE_DIMENSIONS, 'unique key dimension')),
    states: readStrings(policy['states'], 'unique states').map((state) => readOneOf(state, JOB_STATES, 'unique state')),
    onConflict: readOneOf(policy['onConflict'], UNIQUE_CONFLICTS, 'unique onConflict'),
  };
  if (policy['argsKeys'] !== undefined) read.argsKeys = readStrings(policy['argsKeys'], 'unique argsKeys');
  if (policy['metaKeys'] !== undefined) read.metaKeys = readStrings(policy['metaKeys'], 'unique metaKeys');
  if (policy['period'] !== undefined) read.period = readString(policy['period'], 'unique period');
  if (policy['periodMs'] !== undefined) read.periodMs = readNumber(policy['periodMs'], 'unique periodMs');
  return { policy: read, key: readString(fields['key'], 'unique key') };
}

function optionalNumber(value: JsonValue | undefined, what: string): number | undefined {
  return value === undefined ? undefined : readNumber(value, what);
}

function readBody(text: string): JobBody {
  const body = readJsonObject(readJson(text, 'job body'), 'job body');
  const schema = body['schema'];
  return {
    specversion: readString(body['specversion'], 'job specversion'),
    id: readString(body['id'], 'job id'),
    type: readString(body['type'], 'job type'),
    queue: readString(body['queue'], 'job queue'),
    args: readJsonArray(body['args'], 'job args'),
    meta: readJsonObject(body['meta'], 'job meta'),
    priority: readNumber(body['priority'], 'job priority'),
    timeoutMs: readNumber(body['timeoutMs'], 'job timeoutMs'),
    gracePeriodMs: readNumber(body['gracePeriodMs'], 'job gracePeriodMs'),
    heartbeatTimeoutMs: readNumber(body['heartbeatTimeoutMs'], 'job heartbeatTimeoutMs'),
    totalTimeoutMs: optionalNumber(body['totalTimeoutMs'], 'job totalTimeoutMs'),
    enqueueTtlMs: optionalNumber(body['enqueueTtlMs'], 'job enqueueTtlMs'),
    scheduledAt: optionalNumber(body['scheduledAt'], 'job scheduledAt'),
    expiresAt: optionalNumber(body['expiresAt'], 'job expiresAt'),
    retry: body['retry'] === undefined ? undefined : readRetryPolicy(body['retry']),
    visibilityTimeoutMs: readNumber(body['visibilityTimeoutMs'], 'job visibilityTimeoutMs'),
    schema: schema === undefined ? undefined : readString(schema, 'job schema'),
    unique: body['unique'] === undefined ? undefined : readUniqueConstraint(body['unique']),
    createdAt: readNumber(body['createdAt'], 'job createdAt'),
    workflow: body['workflow'] === undefined ? undefined : readWorkflowLink(body['workflow']),
  };
}

function readWorkflowLink(value: JsonValue | undefined): WorkflowLink {
  const link = readJsonObject(value, 'job body workflow');
  return {
    id: readString(link['id'], 'job workflow id'),
    node: readInteger(link['node'], 'job workflow node'),
    step: readString(link['step'], 'job workflow step'),
  };
}

/** A workflow job's parent_results as its hash keeps them (set when it became available; absent: none). */
function readParentResults(text: string | undefined, what: string): JsonObject | undefined {
  return text === undefined || text === '' ? undefined : readJsonObject(readJson(text, what), what);
}

/** A recorded error (errors written without a backtrace get an empty one). */
function readJobError(value: JsonValue | undefined, what: string): JobError {
  const fields = readJsonObject(value, what);
  const error: JobError = {
    type: readString(fields['type'], `${what} type`),
    message: readString(fields['message'], `${what} message`),
    backtrace: fields['backtrace'] === undefined ? [] : readStrings(fields['backtrace'], `${what} backtrace`),
    attempt: readNumber(fields['attempt'], `${what} attempt`),
    occurredAt: readNumber(fields['occurredAt'], `${what} occurredAt`),
  };
  if (fields['code'] !== undefined) error.code = readKeyOf(fields['code'], HANDLER_CODES, `${what} code`);
  if (fields['details'] !== undefined) error.details = readJsonObject(fields['details'], `${what} details`);
  return error;
}

function readErrors(text: string | undefined): JobError[] {
  if (text === undefined || text === '' || text === '[]') return [];
  return readJsonArray(readJson(text, 'job errors'), 'job errors').map((error, i) => readJobError(error, `job errors[${i}]`));
}

/** The job that the body and the mutable fields describe, built with one fixed shape. */
function jobFrom(body: JobBody, state: JobState, attempt: number, errors: string | undefined): Job {
  const job: Job = {
    specversion: body.specversion,
    id: body.id,
    type: body.type,
    queue: body.queue,
    args: body.args,
    meta: body.meta,
    priority: body.priority,
    timeoutMs: body.timeoutMs,
    gracePeriodMs: body.gracePeriodMs,
    heartbeatTimeoutMs: body.heartbeatTimeoutMs,
    totalTimeoutMs: body.totalTimeoutMs,
    enqueueTtlMs: body.enqueueTtlMs,
    scheduledAt: body.scheduledAt,
    expiresAt: body.expiresAt,
    retry: body.retry ?? DEFAULT_RETRY_POLICY,
    visibilityTimeoutMs: body.visibilityTimeoutMs,
    schema: body.schema,
    unique: body.unique,
    state,
    attempt,
    createdAt: body.createdAt,
    enqueuedAt: undefined,
    startedAt: undefined,
    completedAt: undefined,
    error: undefined,
    errors: readErrors(errors),
    result: undefined,
    nextRetryAt: undefined,
    deadLetter: false,
    lease: undefined,
    progress: undefined,
    progressData: undefined,
    lastCheckpoint: undefined,
  };
  if (body.workflow !== undefined) job.workflow = body.workflow;
  return job;
}

/**
 * A job from its hash (as read by readFlatHash), or undefined for a missing
 * key. Scripts leave fields behind when a state change makes them
 * meaningless (the lease of a finished attempt, the error of a completed
 * job...), which saves a write on every settlement; this is the one place
 * that shows each field only in the states where it means something.
 */
export function decodeJob(fields: Readonly<Record<string, string>>): Job | undefined {
  const bodyText = fields['body'];
  if (bodyText === undefined) return undefined;
  const state = readOneOf(fields['state'], JOB_STATES, 'job state');
  const number = (name: string): number | undefined => readOptionalNumberText(fields[name], `job field ${name}`);
  const job = jobFrom(readBody(bodyText), state, number('attempt') ?? 0, fields['errors']);
  job.enqueuedAt = number('enqueuedAt');
  job.startedAt = number('startedAt');
  if (isTerminal(state)) job.completedAt = number('completedAt');
  if (state === 'retryable') job.nextRetryAt = number('nextRetryAt');
  if (state === 'discarded') job.deadLetter = fields['deadLetter'] === '1';
  const error = fields['error'];
  if (state !== 'completed' && error !== undefined) job.error = readJobError(readJson(error, 'job error'), 'job error');
  const result = fields['result'];
  if (state === 'completed' && result !== undefined) job.result = readJson(result, 'job result');
  const leaseWorker = fields['leaseWorker'];
  if (state === 'active' && leaseWorker !== undefined) {
    job.lease = {
      workerId: leaseWorker,
      token: fields['leaseToken'] ?? '',
      expiresAt: number('leaseExpiresAt') ?? 0,
      renewedAt: number('leaseRenewedAt') ?? job.startedAt ?? 0,
      isConfirmed: fields['leaseConfirmed'] === '1',
    };
  }
  // Progress belongs to one attempt (ojs-progress); the checkpoint outlives it.
  if (fields['progressAttempt'] === fields['attempt']) {
    job.progress = number('progress');
    const data = fields['progressData'];
    if (data !== undefined) job.progressData = readJsonObject(readJson(data, 'job progressData'), 'job progressData');
  }
  const checkpoint = fields['checkpoint'];
  if (checkpoint !== undefined) job.lastCheckpoint = readJson(checkpoint, 'job checkpoint');
  const parentResults = readParentResults(fields['parentResults'], 'job parentResults');
  if (parentResults !== undefined) job.parentResults = parentResults;
  return job;
}

/** The fields of a claimed job's line (lua/claim.lua). */
const CLAIMED_FIELDS = 9;

/**
 * A job claim.lua just made active, from its compact reply: one line of
 * its id, attempt, lease expiry, body, enqueued at, errors, error,
 * checkpoint and parent results, joined by FIELD_SEPARATOR. An active job
 * has no result, completion, retry time, dead-letter mark or progress yet.
 */
export function decodeClaimedJob(reply: unknown, workerId: string, leaseNonce: string, now: number): Job {
  const fields = readString(reply, 'claimed job').split(FIELD_SEPARATOR);
  if (fields.length !== CLAIMED_FIELDS) unexpectedReply('claimed job', reply);
  const [, attemptText, expiresAt, body, enqueuedAt, errors, error, checkpoint, parentResultsText] = fields;
  const attempt = readInteger(attemptText, 'claimed job attempt');
  const job = jobFrom(readBody(body!), 'active', attempt, errors);
  job.startedAt = now;
  job.enqueuedAt = readOptionalNumberText(enqueuedAt, 'claimed job enqueuedAt');
  if (error !== '') job.error = readJobError(readJson(error!, 'claimed job error'), 'claimed job error');
  if (checkpoint !== '') job.lastCheckpoint = readJson(checkpoint!, 'claimed job checkpoint');
  const parentResults = readParentResults(parentResultsText, 'claimed job parentResults');
  if (parentResults !== undefined) job.parentResults = parentResults;
  job.lease = {
    workerId,
    token: leaseToken(leaseNonce, attempt),
    expiresAt: readInteger(expiresAt, 'claimed job lease expiry'),
    renewedAt: now,
    isConfirmed: false,
  };
  return job;
}
