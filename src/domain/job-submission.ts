import { batchTooLarge, invalidPayload, invalidRequest, payloadTooLarge, type FieldViolation } from './errors';
import { hasControlCharacters, jobIdProblem, jobTypeProblem, queueNameProblem } from './identifiers';
import type { Job } from './job';
import { checkJson, checkJsonObject, type JsonObject, type JsonValue } from './json';
import {
  DELIVERY_BUDGET_BYTES,
  MAX_ENQUEUE_BATCH,
  META_MAX_BYTES,
  SCHEMA_MAX_CHARS,
  SPECVERSION_MAX_CHARS,
  type PayloadLimits,
} from './limits';
import { resolveRetryPolicy, type RetryPolicyInput } from './retry-policy';
import { timestampProblem } from './timestamps';
import { resolveUniqueConstraint, uniquePolicyChars, type UniquePolicyInput } from './unique-policy';

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
  unique?: UniquePolicyInput;
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
  /** Lowercase hex SHA-256 of a text: the uniqueness keys of unique jobs. */
  digest: (text: string) => string;
  defaults: JobDefaults;
  limits: PayloadLimits;
  /** Stage the job as pending until it is activated. */
  pending: boolean;
}

export const DEFAULT_QUEUE = 'default';
export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;
export { META_MAX_BYTES, queueNameProblem };

const SPECVERSION_PATTERN = /^1\.0(\.\d+)?(-[0-9A-Za-z.-]+)?$/;

/** A limit in whole seconds; 0 or absent means `fallbackMs` (undefined: none). */
function secondsToMs<T extends number | undefined>(
  seconds: number | undefined,
  fallbackMs: T,
  field: string,
  violations: FieldViolation[],
): number | T {
  if (seconds === undefined || seconds === 0) return fallbackMs;
  if (!Number.isInteger(seconds) || seconds < 0) {
    violations.push({ field, description: 'must be a positive whole number of seconds' });
    return fallbackMs;
  }
  return seconds * 1000;
}

/** An optional timestamp, checked to be one the server can store and send back. */
function timestamp(ms: number | undefined, field: string, violations: FieldViolation[]): number | undefined {
  if (ms === undefined) return undefined;
  const problem = timestampProblem(ms);
  if (problem === undefined) return ms;
  violations.push({ field, description: problem });
  return undefined;
}

/** args and meta, checked as JSON and measured together. */
function payload(
  submission: JobSubmission,
  bad: (name: string, description: string) => void,
): { args: JsonValue[]; meta: JsonObject; bytes: number } {
  // Invalid values are reported and left out: a job with violations is never stored.
  const args: JsonValue[] = [];
  let bytes = 0;
  submission.args.forEach((arg, i) => {
    const check = checkJson(arg, 1);
    if (!check.ok) return bad(`args[${i}]`, check.problem);
    args.push(check.value);
    bytes += check.bytes;
  });
  let meta: JsonObject = {};
  if (submission.meta !== undefined) {
    const check = checkJsonObject(submission.meta);
    if (!check.ok) bad('meta', check.problem);
    else if (check.bytes > META_MAX_BYTES) bad('meta', `is ${check.bytes} bytes; at most ${META_MAX_BYTES} are accepted`);
    else {
      meta = check.value;
      bytes += check.bytes;
    }
  }
  return { args, meta, bytes };
}

/** What is wrong with a batch of submissions: field violations, and values over their size limit. */
export interface SubmissionProblems {
  violations: FieldViolation[];
  oversized: { field: string; bytes: number; maxBytes: number }[];
  /** Bytes the jobs built so far take in the answer to their enqueue, at most. */
  answerBytes: number;
}

/**
 * Validates a submission and turns it into a stored job in its initial state
 * (scheduled, available or pending). Every problem is collected, with field
 * names under `path`, so that one answer lists everything to fix.
 */
export function buildJob(submission: JobSubmission, creation: JobCreation, path: string, problems: SubmissionProblems): Job {
  const { violations } = problems;
  const field = (name: string): string => `${path}.${name}`;
  const bad = (name: string, description: string): void => {
    violations.push({ field: field(name), description });
  };
  const check = (name: string, problem: string | undefined): void => {
    if (problem !== undefined) bad(name, problem);
  };
  const { now } = creation;

  const specversion = submission.specversion || '1.0';
  if (specversion.length > SPECVERSION_MAX_CHARS || !SPECVERSION_PATTERN.test(specversion)) bad('specversion', 'must be "1.0"');
  let id = submission.id ?? '';
  if (id === '') id = creation.newId();
  else check('id', jobIdProblem(id));
  check('type', jobTypeProblem(submission.type));
  const queue = submission.queue || DEFAULT_QUEUE;
  check('queue', queueNameProblem(queue));
  const schema = submission.schema ?? '';
  if (schema.length > SCHEMA_MAX_CHARS) bad('schema', `must be at most ${SCHEMA_MAX_CHARS} characters`);
  else if (hasControlCharacters(schema)) bad('schema', 'must not contain control characters');

  const { args, meta, bytes } = payload(submission, bad);
  if (bytes > creation.limits.maxJobBytes) problems.oversized.push({ field: field('args'), bytes, maxBytes: creation.limits.maxJobBytes });
  problems.answerBytes += bytes + 6 * args.length;

  const priority = submission.priority ?? 0;
  if (!Number.isInteger(priority) || priority < PRIORITY_MIN || priority > PRIORITY_MAX) {
    bad('priority', `must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}`);
  }
  const defaults = creation.defaults;
  const timeoutMs = secondsToMs(submission.timeoutSeconds, defaults.timeoutMs, field('timeout'), violations);
  const visibilityTimeoutMs = secondsToMs(
    submission.visibilityTimeoutSeconds,
    defaults.visibilityTimeoutMs,
    field('visibility_timeout'),
    violations,
  );
  const retry = resolveRetryPolicy(submission.retry, field('retry'), violations);
  // timeouts.md section 6: every limit positive, the total not below one attempt, the grace possibly 0.
  const heartbeatTimeoutMs = secondsToMs(
    submission.heartbeatTimeoutSeconds,
    defaults.heartbeatTimeoutMs,
    field('heartbeat_timeout'),
    violations,
  );
  const totalTimeoutMs = secondsToMs(submission.totalTimeoutSeconds, undefined, field('total_timeout'), violations);
  const enqueueTtlMs = secondsToMs(submission.enqueueTtlSeconds, undefined, field('enqueue_ttl'), violations);
  if (totalTimeoutMs !== undefined && totalTimeoutMs < timeoutMs) bad('total_timeout', 'must not be shorter than timeout');
  let gracePeriodMs = defaults.gracePeriodMs;
  if (submission.gracePeriodSeconds !== undefined) {
    if (!Number.isInteger(submission.gracePeriodSeconds) || submission.gracePeriodSeconds < 0) {
      bad('grace_period', 'must be a whole number of seconds, 0 or more');
    } else gracePeriodMs = submission.gracePeriodSeconds * 1000;
  }
  const scheduledAt = timestamp(submission.scheduledAt, field('scheduled_at'), violations);
  const expiresAt = timestamp(submission.expiresAt, field('expires_at'), violations);

  const isScheduled = scheduledAt !== undefined && scheduledAt > now;
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
  if (scheduledAt !== undefined) job.scheduledAt = scheduledAt;
  if (expiresAt !== undefined) job.expiresAt = expiresAt;
  if (schema !== '') job.schema = schema;
  if (totalTimeoutMs !== undefined) job.totalTimeoutMs = totalTimeoutMs;
  if (enqueueTtlMs !== undefined) job.enqueueTtlMs = enqueueTtlMs;
  const unique = resolveUniqueConstraint(submission.unique, job, field('unique'), violations, creation.digest);
  if (unique !== undefined) job.unique = unique;
  problems.answerBytes += envelopeBytes(job);
  return job;
}

/** The envelope fields other than args and meta, as encoded in an answer: at most this many bytes. */
const ENVELOPE_FIXED_BYTES = 512;

/** An upper bound on a new job's envelope without its args and meta: its strings (3 bytes a character at most) and the fixed fields. */
function envelopeBytes(job: Job): number {
  const chars =
    job.id.length +
    job.type.length +
    job.queue.length +
    job.specversion.length +
    (job.schema?.length ?? 0) +
    job.retry.nonRetryableErrors.reduce((sum, type) => sum + type.length + 2, 0) +
    (job.unique === undefined ? 0 : uniquePolicyChars(job.unique.policy));
  return 3 * chars + ENVELOPE_FIXED_BYTES;
}

/**
 * Builds a batch, all or nothing: an `invalid_payload` error lists every
 * violation; otherwise a `payload_too_large` error names the first job over
 * the limit, or the batch when its answer would not fit one message.
 */
export function buildJobs(submissions: readonly JobSubmission[], creation: JobCreation): Job[] {
  if (submissions.length === 0) throw invalidRequest('jobs', 'at least one job is required');
  if (submissions.length > MAX_ENQUEUE_BATCH) throw invalidRequest('jobs', `at most ${MAX_ENQUEUE_BATCH} jobs per call`);
  const problems: SubmissionProblems = { violations: [], oversized: [], answerBytes: 0 };
  const jobs = submissions.map((submission, i) => buildJob(submission, creation, `jobs[${i}]`, problems));
  if (problems.violations.length > 0) throw invalidPayload(problems.violations);
  const [oversized] = problems.oversized;
  if (oversized !== undefined) throw payloadTooLarge(oversized.field, oversized.bytes, oversized.maxBytes);
  // The answer carries every stored envelope: a batch whose answer a client could not receive is refused before it is stored.
  if (problems.answerBytes > DELIVERY_BUDGET_BYTES) throw batchTooLarge('jobs', problems.answerBytes, DELIVERY_BUDGET_BYTES);
  return jobs;
}
