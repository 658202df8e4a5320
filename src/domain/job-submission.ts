import { invalidPayload, type FieldViolation } from './errors';
import type { Job } from './job';
import { isJsonObject, isJsonValue, jsonProblem, type JsonObject, type JsonValue } from './json';
import { resolveRetryPolicy, type RetryPolicyInput } from './retry-policy';

/**
 * A job as a producer submits it. Absent optional fields take defaults; the
 * system-managed attributes are not part of a submission at all, which is
 * how the server ignores them.
 */
export interface JobSubmission {
  specversion?: string;
  id?: string;
  type: string;
  queue?: string;
  args: unknown[];
  meta?: Record<string, unknown>;
  priority?: number;
  timeoutSeconds?: number;
  scheduledAt?: number;
  expiresAt?: number;
  retry?: RetryPolicyInput;
  visibilityTimeoutSeconds?: number;
  schema?: string;
  totalTimeoutSeconds?: number;
  enqueueTtlSeconds?: number;
  gracePeriodSeconds?: number;
  heartbeatTimeoutSeconds?: number;
}

/** Server defaults resolved into each job at enqueue. */
export interface JobDefaults {
  timeoutMs: number;
  visibilityTimeoutMs: number;
  gracePeriodMs: number;
  heartbeatTimeoutMs: number;
}

export interface JobCreation {
  now: number;
  newId: () => string;
  defaults: JobDefaults;
  /** Stage the job as pending until it is activated. */
  pending: boolean;
}

export const DEFAULT_QUEUE = 'default';
export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;
export const META_MAX_BYTES = 64 * 1024;

const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const QUEUE_PATTERN = /^[a-z0-9][a-z0-9.-]*$/;
const UUIDV7_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SPECVERSION_PATTERN = /^1\.0(\.\d+)?(-[0-9A-Za-z.-]+)?$/;

/** Why `queue` is not a valid queue name (ojs-core 5.1), or undefined. */
export function queueNameProblem(queue: string): string | undefined {
  if (queue.length > 128) return 'must be at most 128 characters';
  if (!QUEUE_PATTERN.test(queue)) return 'must match [a-z0-9][a-z0-9.-]* (lowercase letters, digits, "-" and ".")';
  return undefined;
}

function typeProblem(type: string): string | undefined {
  if (type.length === 0) return 'is required';
  if (type.length > 255) return 'must be at most 255 characters';
  if (!TYPE_PATTERN.test(type)) return 'must be dot-separated segments matching [a-z][a-z0-9_]*, e.g. "email.send"';
  return undefined;
}

function secondsToMs(seconds: number | undefined, fallbackMs: number, field: string, violations: FieldViolation[]): number {
  if (seconds === undefined || seconds === 0) return fallbackMs;
  if (!Number.isInteger(seconds) || seconds < 0) {
    violations.push({ field, description: 'must be a positive whole number of seconds' });
    return fallbackMs;
  }
  return seconds * 1000;
}

/** An optional limit in whole seconds (0 or absent: none). */
function optionalSecondsToMs(seconds: number | undefined, field: string, violations: FieldViolation[]): number | undefined {
  if (seconds === undefined || seconds === 0) return undefined;
  if (!Number.isInteger(seconds) || seconds < 0) {
    violations.push({ field, description: 'must be a positive whole number of seconds' });
    return undefined;
  }
  return seconds * 1000;
}

/**
 * Validates a submission and turns it into a stored job in its initial state
 * (scheduled, available or pending). Every violation is collected, with
 * field names under `path`, so that one answer lists everything to fix.
 */
export function buildJob(submission: JobSubmission, creation: JobCreation, path: string, violations: FieldViolation[]): Job {
  const field = (name: string): string => `${path}.${name}`;
  const bad = (name: string, description: string): void => {
    violations.push({ field: field(name), description });
  };
  const { now } = creation;

  const specversion = submission.specversion || '1.0';
  if (!SPECVERSION_PATTERN.test(specversion)) bad('specversion', 'must be "1.0"');
  let id = submission.id ?? '';
  if (id === '') id = creation.newId();
  else if (!UUIDV7_PATTERN.test(id)) bad('id', 'must be a lowercase UUIDv7 (8-4-4-4-12 hex)');
  const typeIssue = typeProblem(submission.type);
  if (typeIssue !== undefined) bad('type', typeIssue);
  const queue = submission.queue || DEFAULT_QUEUE;
  const queueIssue = queueNameProblem(queue);
  if (queueIssue !== undefined) bad('queue', queueIssue);

  // Invalid values are reported and left out: a job with violations is never stored.
  const args: JsonValue[] = [];
  submission.args.forEach((arg, i) => {
    if (isJsonValue(arg, 1)) args.push(arg);
    else bad(`args[${i}]`, jsonProblem(arg, 1)!);
  });
  const submittedMeta = submission.meta ?? {};
  let meta: JsonObject = {};
  if (!isJsonObject(submittedMeta)) bad('meta', jsonProblem(submittedMeta)!);
  else {
    meta = submittedMeta;
    if (Object.keys(meta).length > 0 && JSON.stringify(meta).length > META_MAX_BYTES) bad('meta', 'must be at most 64 KB as JSON');
  }

  const priority = submission.priority ?? 0;
  if (!Number.isInteger(priority) || priority < PRIORITY_MIN || priority > PRIORITY_MAX) {
    bad('priority', `must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}`);
  }
  const timeoutMs = secondsToMs(submission.timeoutSeconds, creation.defaults.timeoutMs, field('timeout'), violations);
  const visibilityTimeoutMs = secondsToMs(
    submission.visibilityTimeoutSeconds,
    creation.defaults.visibilityTimeoutMs,
    field('visibility_timeout'),
    violations,
  );
  const retry = resolveRetryPolicy(submission.retry, field('retry'), violations);
  // timeouts.md section 6: every limit positive, the total not below one attempt, the grace possibly 0.
  const heartbeatTimeoutMs = secondsToMs(
    submission.heartbeatTimeoutSeconds,
    creation.defaults.heartbeatTimeoutMs,
    field('heartbeat_timeout'),
    violations,
  );
  const totalTimeoutMs = optionalSecondsToMs(submission.totalTimeoutSeconds, field('total_timeout'), violations);
  const enqueueTtlMs = optionalSecondsToMs(submission.enqueueTtlSeconds, field('enqueue_ttl'), violations);
  if (totalTimeoutMs !== undefined && totalTimeoutMs < timeoutMs) bad('total_timeout', 'must not be shorter than timeout');
  let gracePeriodMs = creation.defaults.gracePeriodMs;
  if (submission.gracePeriodSeconds !== undefined) {
    if (!Number.isInteger(submission.gracePeriodSeconds) || submission.gracePeriodSeconds < 0)
      bad('grace_period', 'must be a whole number of seconds, 0 or more');
    else gracePeriodMs = submission.gracePeriodSeconds * 1000;
  }

  const isScheduled = submission.scheduledAt !== undefined && submission.scheduledAt > now;
  const state = creation.pending ? 'pending' : isScheduled ? 'scheduled' : 'available';
  const job: Job = {
    specversion,
    id,
    type: submission.type,
    queue,
    args,
    meta,
    priority,
    timeoutMs,
    gracePeriodMs,
    heartbeatTimeoutMs,
    retry,
    visibilityTimeoutMs,
    state,
    attempt: 0,
    createdAt: now,
    errors: [],
    deadLetter: false,
  };
  if (state === 'available') job.enqueuedAt = now;
  if (submission.scheduledAt !== undefined) job.scheduledAt = submission.scheduledAt;
  if (submission.expiresAt !== undefined) job.expiresAt = submission.expiresAt;
  if (submission.schema) job.schema = submission.schema;
  if (totalTimeoutMs !== undefined) job.totalTimeoutMs = totalTimeoutMs;
  if (enqueueTtlMs !== undefined) job.enqueueTtlMs = enqueueTtlMs;
  return job;
}

/** Builds a batch, failing with one `invalid_payload` error that lists every violation. */
export function buildJobs(submissions: readonly JobSubmission[], creation: JobCreation): Job[] {
  const violations: FieldViolation[] = [];
  const jobs = submissions.map((submission, i) => buildJob(submission, creation, `jobs[${i}]`, violations));
  if (violations.length > 0) throw invalidPayload(violations);
  return jobs;
}
