import type { Job, JobError, JobState } from '../../domain/job';
import type { JsonObject, JsonValue } from '../../domain/json';
import type { RetryPolicy } from '../../domain/retry-policy';
import { fromFlatHash, optionalNumber, toPairs, type FlatHash } from './hash-fields';

/**
 * A job as a Redis hash. What never changes after enqueue is one JSON field
 * (`body`) that only TypeScript reads; scripts work on the scalar fields
 * (state, attempt, lease...) and on copies of the few body values they need
 * (type, queue, priority, vis, scheduledAt, expiresAt). Errors and results
 * are JSON strings built here, so Lua never parses user data.
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
  scheduledAt?: number;
  expiresAt?: number;
  retry: RetryPolicy;
  visibilityTimeoutMs: number;
  schema?: string;
  createdAt: number;
}

/** The hash of a new job, as field/value pairs for HSET. */
export function newJobPairs(job: Job): string[] {
  const body: JobBody = {
    specversion: job.specversion,
    id: job.id,
    type: job.type,
    queue: job.queue,
    args: job.args,
    meta: job.meta,
    priority: job.priority,
    timeoutMs: job.timeoutMs,
    retry: job.retry,
    visibilityTimeoutMs: job.visibilityTimeoutMs,
    createdAt: job.createdAt,
  };
  if (job.scheduledAt !== undefined) body.scheduledAt = job.scheduledAt;
  if (job.expiresAt !== undefined) body.expiresAt = job.expiresAt;
  if (job.schema !== undefined) body.schema = job.schema;
  return toPairs({
    body: JSON.stringify(body),
    type: job.type,
    queue: job.queue,
    priority: job.priority,
    vis: job.visibilityTimeoutMs,
    scheduledAt: job.scheduledAt,
    expiresAt: job.expiresAt,
    state: job.state,
    attempt: job.attempt,
    enqueuedAt: job.enqueuedAt,
    errors: JSON.stringify(job.errors),
    deadLetter: job.deadLetter ? 1 : 0,
  });
}

/** A job from its hash (as HGETALL returns it), or undefined for a missing key. */
export function decodeJob(hash: FlatHash | Record<string, string>): Job | undefined {
  const fields = Array.isArray(hash) ? fromFlatHash(hash) : (hash as Record<string, string>);
  if (fields['body'] === undefined) return undefined;
  const body = JSON.parse(fields['body']) as JobBody;
  const job: Job = {
    ...body,
    state: fields['state'] as JobState,
    attempt: Number(fields['attempt'] ?? 0),
    errors: (JSON.parse(fields['errors'] ?? '[]') as JobError[]).map(normalizeError),
    deadLetter: fields['deadLetter'] === '1',
  };
  const enqueuedAt = optionalNumber(fields['enqueuedAt']);
  const startedAt = optionalNumber(fields['startedAt']);
  const completedAt = optionalNumber(fields['completedAt']);
  const nextRetryAt = optionalNumber(fields['nextRetryAt']);
  if (enqueuedAt !== undefined) job.enqueuedAt = enqueuedAt;
  if (startedAt !== undefined) job.startedAt = startedAt;
  if (completedAt !== undefined) job.completedAt = completedAt;
  if (nextRetryAt !== undefined) job.nextRetryAt = nextRetryAt;
  if (fields['error'] !== undefined) job.error = normalizeError(JSON.parse(fields['error']) as JobError);
  if (fields['result'] !== undefined) job.result = JSON.parse(fields['result']) as JsonValue;
  if (fields['leaseWorker'] !== undefined) {
    job.lease = {
      workerId: fields['leaseWorker'],
      token: fields['leaseToken'] ?? '',
      expiresAt: Number(fields['leaseExpiresAt']),
      isConfirmed: fields['leaseConfirmed'] === '1',
    };
  }
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
