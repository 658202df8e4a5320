import type { Job, JobError, JobState } from '../../domain/job';
import { isTerminal } from '../../domain/job-state-machine';
import { leaseToken } from '../../domain/lease';
import type { JsonObject, JsonValue } from '../../domain/json';
import { DEFAULT_RETRY_POLICY, isDefaultRetryPolicy, type RetryPolicy } from '../../domain/retry-policy';
import { fromFlatHash, optionalNumber, type FlatHash } from './hash-fields';

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
  createdAt: number;
}

/**
 * A new job as enqueue.lua takes it: the scalar fields scripts work on, in
 * the order enqueue.lua names them, then the body JSON, so the body is
 * encoded once and a script neither splits strings nor decodes JSON.
 * `discardAt` is the part of the waiting deadline that never changes
 * (expires_at, total timeout); the enqueue TTL applies only before the first
 * attempt, so scripts keep it apart (domain waitingDeadline).
 */
export function newJobArgs(job: Job): (string | number)[] {
  const totalAt = job.totalTimeoutMs === undefined ? undefined : job.createdAt + job.totalTimeoutMs;
  const discardAt = [job.expiresAt, totalAt].filter((at): at is number => at !== undefined);
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
  };
  if (job.totalTimeoutMs !== undefined) body.totalTimeoutMs = job.totalTimeoutMs;
  if (job.enqueueTtlMs !== undefined) body.enqueueTtlMs = job.enqueueTtlMs;
  if (!isDefaultRetryPolicy(job.retry)) body.retry = job.retry;
  if (job.scheduledAt !== undefined) body.scheduledAt = job.scheduledAt;
  if (job.expiresAt !== undefined) body.expiresAt = job.expiresAt;
  if (job.schema !== undefined) body.schema = job.schema;
  return [
    job.id,
    job.queue,
    job.state,
    job.priority,
    discardAt.length === 0 ? '' : Math.min(...discardAt),
    job.enqueueTtlMs === undefined ? '' : job.createdAt + job.enqueueTtlMs,
    job.scheduledAt ?? '',
    job.type,
    job.visibilityTimeoutMs,
    job.timeoutMs,
    job.gracePeriodMs,
    job.heartbeatTimeoutMs,
    totalAt ?? '',
    JSON.stringify(body),
  ];
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
    state,
    attempt,
    createdAt: body.createdAt,
    enqueuedAt: undefined,
    startedAt: undefined,
    completedAt: undefined,
    error: undefined,
    errors: errors === undefined || errors === '[]' ? [] : (JSON.parse(errors) as JobError[]).map(normalizeError),
    result: undefined,
    nextRetryAt: undefined,
    deadLetter: false,
    lease: undefined,
    progress: undefined,
    progressData: undefined,
    lastCheckpoint: undefined,
  };
  return job;
}

/**
 * A job from its hash (as HGETALL returns it), or undefined for a missing key.
 * Scripts leave fields behind when a state change makes them meaningless
 * (the lease of a finished attempt, the error of a completed job...), which
 * saves a write on every settlement; this is the one place that shows each
 * field only in the states where it means something.
 */
export function decodeJob(hash: FlatHash | Record<string, string>): Job | undefined {
  const fields = Array.isArray(hash) ? fromFlatHash(hash) : (hash as Record<string, string>);
  if (fields['body'] === undefined) return undefined;
  const state = fields['state'] as JobState;
  const job = jobFrom(JSON.parse(fields['body']) as JobBody, state, Number(fields['attempt'] ?? 0), fields['errors']);
  job.enqueuedAt = optionalNumber(fields['enqueuedAt']);
  job.startedAt = optionalNumber(fields['startedAt']);
  if (isTerminal(state)) job.completedAt = optionalNumber(fields['completedAt']);
  if (state === 'retryable') job.nextRetryAt = optionalNumber(fields['nextRetryAt']);
  if (state === 'discarded') job.deadLetter = fields['deadLetter'] === '1';
  if (state !== 'completed' && fields['error'] !== undefined) job.error = normalizeError(JSON.parse(fields['error']) as JobError);
  if (state === 'completed' && fields['result'] !== undefined) job.result = JSON.parse(fields['result']) as JsonValue;
  if (state === 'active' && fields['leaseWorker'] !== undefined) {
    job.lease = {
      workerId: fields['leaseWorker'],
      token: fields['leaseToken'] ?? '',
      expiresAt: Number(fields['leaseExpiresAt']),
      renewedAt: Number(fields['leaseRenewedAt'] ?? fields['startedAt']),
      isConfirmed: fields['leaseConfirmed'] === '1',
    };
  }
  // Progress belongs to one attempt (ojs-progress); the checkpoint outlives it.
  if (fields['progressAttempt'] === fields['attempt']) {
    job.progress = optionalNumber(fields['progress']);
    if (fields['progressData'] !== undefined) job.progressData = JSON.parse(fields['progressData']) as JsonObject;
  }
  if (fields['checkpoint'] !== undefined) job.lastCheckpoint = JSON.parse(fields['checkpoint']) as JsonValue;
  return job;
}

/**
 * A job claim.lua just made active, from its compact reply ({id, attempt,
 * lease expires at, body, enqueued at, errors, error, checkpoint}): an active
 * job has no result, completion, retry time, dead-letter mark or progress yet.
 */
export function decodeClaimedJob(reply: readonly string[], workerId: string, leaseNonce: string, now: number): Job {
  const attempt = Number(reply[1]);
  const job = jobFrom(JSON.parse(reply[3]!) as JobBody, 'active', attempt, reply[5]);
  job.startedAt = now;
  job.enqueuedAt = optionalNumber(reply[4]);
  if (reply[6]) job.error = normalizeError(JSON.parse(reply[6]) as JobError);
  if (reply[7]) job.lastCheckpoint = JSON.parse(reply[7]) as JsonValue;
  job.lease = { workerId, token: leaseToken(leaseNonce, attempt), expiresAt: Number(reply[2]), renewedAt: now, isConfirmed: false };
  return job;
}

/** Errors written by a script (expiry) carry no backtrace. */
function normalizeError(error: JobError): JobError {
  return error.backtrace === undefined ? { ...error, backtrace: [] } : error;
}

/** The JSON a script stores for an outcome's error, history and result. */
export function encodeJson(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value);
}
