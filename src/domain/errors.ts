/**
 * The OJS error codes this server returns (ojs-grpc-binding section 7). The
 * transport maps each to exactly one gRPC status, in one table.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_payload'
  | 'not_found'
  | 'duplicate'
  | 'invalid_state'
  /** A job, result or other value is larger than its limit (ojs-payload-limits, ojs-results 7.2). */
  | 'payload_too_large'
  | 'result_too_large'
  /** The store holds as much as it is allowed to (memory bound, Redis maxmemory). */
  | 'queue_full'
  /** A resume point older than what is retained (WatchEvents after an event the log no longer holds). */
  | 'out_of_range'
  /** The caller is known but may not do this (ojs-security: a role or queue it does not hold). */
  | 'permission_denied'
  | 'unavailable'
  | 'backend_error'
  /** No credentials, or credentials that name no principal (ojs-grpc-binding 11.2, 11.3). */
  | 'unauthenticated'
  /** A rate or concurrency limit of the caller was reached (ojs-errors RATE_LIMITED); retryable. */
  | 'rate_limited';

/** One field that failed validation, named by its path in the request. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** Longest client-supplied text an error quotes; the rest is elided, so an answer's trailers stay small. */
export const QUOTE_MAX_CHARS = 64;

/**
 * A client-supplied value (an id, a name) as error messages and metadata
 * quote it: whole when short, otherwise its start and its length. Errors
 * travel in gRPC trailers, which clients cap at a few kilobytes.
 */
export function quote(value: string): string {
  return value.length <= QUOTE_MAX_CHARS ? value : `${value.slice(0, QUOTE_MAX_CHARS)}... (${value.length} characters)`;
}

export interface OjsErrorOptions {
  /** Whether repeating the same call may succeed. Defaults per code. */
  retryable?: boolean;
  /** Machine-readable context, carried in google.rpc.ErrorInfo.metadata. */
  metadata?: Record<string, string>;
  fieldViolations?: FieldViolation[];
  /** How long the caller should wait before trying again, when that is known (google.rpc.RetryInfo). */
  retryDelayMs?: number;
  cause?: unknown;
}

/**
 * OjsError is the one error type of the server. Everything the domain,
 * application and stores refuse is an OjsError; anything else reaching the
 * transport is a bug and is reported as INTERNAL without its details.
 */
export class OjsError extends Error {
  readonly retryable: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  readonly fieldViolations: readonly FieldViolation[];
  readonly retryDelayMs: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: OjsErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OjsError';
    this.retryable = options.retryable ?? (code === 'unavailable' || code === 'queue_full' || code === 'rate_limited');
    this.metadata = options.metadata ?? {};
    this.fieldViolations = options.fieldViolations ?? [];
    this.retryDelayMs = options.retryDelayMs;
  }
}

export function invalidRequest(field: string, description: string): OjsError {
  return new OjsError('invalid_request', `${field}: ${description}`, {
    fieldViolations: [{ field, description }],
    metadata: { field },
  });
}

/** A job envelope failed validation; the message names every bad field. */
export function invalidPayload(violations: FieldViolation[]): OjsError {
  const message = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new OjsError('invalid_payload', message, {
    fieldViolations: violations,
    metadata: { field: violations[0]?.field ?? '' },
  });
}

export function jobNotFound(jobId: string): OjsError {
  return new OjsError('not_found', `job ${quote(jobId)} not found`, { metadata: { job_id: quote(jobId) } });
}

export function scheduleNotFound(name: string): OjsError {
  return new OjsError('not_found', `schedule ${quote(name)} not found`, { metadata: { schedule_name: quote(name) } });
}

export function workflowNotFound(workflowId: string): OjsError {
  return new OjsError('not_found', `workflow ${quote(workflowId)} not found`, { metadata: { workflow_id: quote(workflowId) } });
}

/** A pending job of a workflow becomes available when its workflow says, never by ActivateJob. */
export function waitsForWorkflow(jobId: string, workflowId: string): OjsError {
  return new OjsError('invalid_state', `job ${quote(jobId)} waits for its workflow ${quote(workflowId)}: it cannot be activated`, {
    metadata: { job_id: quote(jobId), workflow_id: quote(workflowId), from_state: 'pending', to_state: 'available' },
  });
}

export function workerNotFound(workerId: string): OjsError {
  return new OjsError('not_found', `worker ${quote(workerId)} is not registered`, { metadata: { worker_id: quote(workerId) } });
}

/**
 * A queue the caller may not use (a principal limited to other queues). It
 * names only what the caller itself sent, so it reveals nothing else.
 */
export function queueNotPermitted(field: string, queue: string): OjsError {
  return new OjsError('permission_denied', `${field}: the caller may not use queue "${quote(queue)}"`, {
    metadata: { field, queue: quote(queue) },
  });
}

export function duplicateJob(jobId: string): OjsError {
  return new OjsError('duplicate', `job ${quote(jobId)} already exists`, { metadata: { job_id: quote(jobId) } });
}

/**
 * A job's unique policy found a duplicate and says reject (ojs-unique-jobs
 * 5.1): the error names the job that holds the key, so the caller can find it.
 */
export function uniqueConflict(field: string, existingJobId: string, existingState: string, uniqueKey: string): OjsError {
  return new OjsError('duplicate', `${field}: job ${quote(existingJobId)} (${existingState}) already holds its uniqueness key`, {
    metadata: { field, existing_job_id: quote(existingJobId), existing_job_state: existingState, uniqueness_key: uniqueKey },
  });
}

export function duplicateWorker(workerId: string): OjsError {
  return new OjsError('duplicate', `worker ${quote(workerId)} is already registered and alive`, {
    metadata: { worker_id: quote(workerId) },
  });
}

export function invalidTransition(jobId: string, from: string, to: string): OjsError {
  return new OjsError('invalid_state', `job ${quote(jobId)} cannot go from ${from} to ${to}`, {
    metadata: { job_id: quote(jobId), from_state: from, to_state: to },
  });
}

/** A workflow cannot make this move, e.g. cancelling one that already finished (ojs-workflows 8.2, 11.3). */
export function invalidWorkflowTransition(workflowId: string, from: string, to: string): OjsError {
  return new OjsError('invalid_state', `workflow ${quote(workflowId)} is ${from}: it cannot become ${to}`, {
    metadata: { workflow_id: quote(workflowId), from_state: from, to_state: to },
  });
}

/** Why an Ack, Fail or lease extension does not match the job's reservation. */
export type LeaseProblem = 'not_active' | 'other_worker' | 'stale_lease';

export function leaseNotHeld(jobId: string, problem: LeaseProblem, state: string): OjsError {
  const id = quote(jobId);
  const reasons: Record<LeaseProblem, string> = {
    not_active: `job ${id} is ${state}, not active`,
    other_worker: `job ${id} is reserved by another worker`,
    stale_lease: `lease token does not match the current attempt of job ${id}`,
  };
  return new OjsError('invalid_state', reasons[problem], { metadata: { job_id: id, lease_problem: problem, state } });
}

export function workerStateConflict(workerId: string, from: string, to: string): OjsError {
  return new OjsError('invalid_state', `worker ${quote(workerId)} cannot go from ${from} to ${to}`, {
    metadata: { worker_id: quote(workerId), from_state: from, to_state: to },
  });
}

/**
 * The caller could not be identified. The same answer whatever was wrong
 * (no token, an unknown token, an unknown certificate), so a refusal never
 * tells what exists.
 */
export function unauthenticated(): OjsError {
  return new OjsError('unauthenticated', 'missing or unknown credentials');
}

/** The caller is known but none of its roles may call `method`. Names the method only, never the principal's roles. */
export function permissionDenied(method: string): OjsError {
  return new OjsError('permission_denied', `not allowed to call ${method}`, { metadata: { method } });
}

/** Which per-principal limit refused a call (ErrorInfo metadata `limit`). */
export type PrincipalLimitKind = 'streams' | 'connections' | 'enqueue_rate';

/**
 * The caller reached one of its limits (`kind`, at most `max`). Retryable:
 * after `retryDelayMs` for a rate, once its own calls or connections end
 * for a concurrency limit. Names nothing but the caller's own limit.
 */
export function rateLimited(kind: PrincipalLimitKind, max: number, retryDelayMs?: number): OjsError {
  const what: Record<PrincipalLimitKind, string> = {
    streams: `the caller already holds its ${max} concurrent streams (Fetch, Beat, WatchEvents, WaitForJob)`,
    connections: `the caller already uses its ${max} connections`,
    enqueue_rate: `the caller enqueues faster than its ${max} jobs a second`,
  };
  const retry = retryDelayMs === undefined ? '' : `; retry in ${retryDelayMs} ms`;
  return new OjsError('rate_limited', `${what[kind]}${retry}`, {
    metadata: { limit: kind, max: String(max) },
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
  });
}

export function backendUnavailable(what: string, cause?: unknown): OjsError {
  return new OjsError('unavailable', `${what} is unavailable`, { cause });
}

/** A value larger than its limit; `field` names it, sizes are in bytes (ojs-payload-limits 9). */
export function payloadTooLarge(field: string, actualBytes: number, maxBytes: number): OjsError {
  const description = `is ${actualBytes} bytes; at most ${maxBytes} are accepted`;
  return new OjsError('payload_too_large', `${field}: ${description}`, {
    fieldViolations: [{ field, description }],
    metadata: { field, actual_bytes: String(actualBytes), max_bytes: String(maxBytes) },
  });
}

/** A batch whose answer could not fit one gRPC message: the client should split it. */
export function batchTooLarge(field: string, bytes: number, maxBytes: number): OjsError {
  const description = `would need an answer of about ${bytes} bytes; at most ${maxBytes} fit one message: split the batch`;
  return new OjsError('payload_too_large', `${field}: ${description}`, {
    fieldViolations: [{ field, description }],
    metadata: { field, actual_bytes: String(bytes), max_bytes: String(maxBytes) },
  });
}

/** An Ack's result is larger than the limit: the job stays active (ojs-results 7.2). */
export function resultTooLarge(jobId: string, actualBytes: number, maxBytes: number): OjsError {
  const description = `is ${actualBytes} bytes; at most ${maxBytes} are accepted (store it elsewhere and return a reference)`;
  return new OjsError('result_too_large', `result of job ${quote(jobId)} ${description}`, {
    fieldViolations: [{ field: 'result', description }],
    metadata: { field: 'result', job_id: quote(jobId), actual_bytes: String(actualBytes), max_bytes: String(maxBytes) },
  });
}

/** The store is at a bound: `bound` names it ("jobs", "bytes", "redis_maxmemory"). Retryable. */
export function storeFull(bound: string, detail: string, cause?: unknown): OjsError {
  return new OjsError('queue_full', `the store is full: ${detail}`, { metadata: { bound }, cause });
}

/** Throws `invalid_request` naming `field` when a validation rule found a problem with it. */
export function assertField(field: string, problem: string | undefined): void {
  if (problem !== undefined) throw invalidRequest(field, problem);
}

/** A watcher asked to resume after an event the log no longer holds: it cannot be told what it missed. */
export function eventsPruned(after: string, oldest: string | undefined): OjsError {
  const held = oldest === undefined ? 'the log holds no events' : `the oldest event the log holds is ${oldest}`;
  return new OjsError(
    'out_of_range',
    `events after ${quote(after)} are no longer retained (${held}); read the jobs' state, then watch from now`,
    {
      metadata: { after: quote(after), ...(oldest === undefined ? {} : { oldest }) },
    },
  );
}
