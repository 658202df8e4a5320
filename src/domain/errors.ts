/**
 * The OJS error codes this server returns (ojs-grpc-binding section 7). The
 * transport maps each to exactly one gRPC status, in one table.
 */
export type ErrorCode =
  'invalid_request' | 'invalid_payload' | 'not_found' | 'duplicate' | 'invalid_state' | 'unavailable' | 'backend_error';

/** One field that failed validation, named by its path in the request. */
export interface FieldViolation {
  field: string;
  description: string;
}

export interface OjsErrorOptions {
  /** Whether repeating the same call may succeed. Defaults per code. */
  retryable?: boolean;
  /** Machine-readable context, carried in google.rpc.ErrorInfo.metadata. */
  metadata?: Record<string, string>;
  fieldViolations?: FieldViolation[];
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

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: OjsErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OjsError';
    this.retryable = options.retryable ?? code === 'unavailable';
    this.metadata = options.metadata ?? {};
    this.fieldViolations = options.fieldViolations ?? [];
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
  return new OjsError('not_found', `job ${jobId} not found`, { metadata: { job_id: jobId } });
}

export function workerNotFound(workerId: string): OjsError {
  return new OjsError('not_found', `worker ${workerId} is not registered`, {
    metadata: { worker_id: workerId },
  });
}

export function duplicateJob(jobId: string): OjsError {
  return new OjsError('duplicate', `job ${jobId} already exists`, { metadata: { job_id: jobId } });
}

export function duplicateWorker(workerId: string): OjsError {
  return new OjsError('duplicate', `worker ${workerId} is already registered and alive`, {
    metadata: { worker_id: workerId },
  });
}

export function invalidTransition(jobId: string, from: string, to: string): OjsError {
  return new OjsError('invalid_state', `job ${jobId} cannot go from ${from} to ${to}`, {
    metadata: { job_id: jobId, from_state: from, to_state: to },
  });
}

/** Why an Ack, Fail or lease extension does not match the job's reservation. */
export type LeaseProblem = 'not_active' | 'other_worker' | 'stale_lease';

export function leaseNotHeld(jobId: string, problem: LeaseProblem, state: string): OjsError {
  const reasons: Record<LeaseProblem, string> = {
    not_active: `job ${jobId} is ${state}, not active`,
    other_worker: `job ${jobId} is reserved by another worker`,
    stale_lease: `lease token does not match the current attempt of job ${jobId}`,
  };
  return new OjsError('invalid_state', reasons[problem], {
    metadata: { job_id: jobId, lease_problem: problem, state },
  });
}

export function workerStateConflict(workerId: string, from: string, to: string): OjsError {
  return new OjsError('invalid_state', `worker ${workerId} cannot go from ${from} to ${to}`, {
    metadata: { worker_id: workerId, from_state: from, to_state: to },
  });
}

export function backendUnavailable(what: string, cause?: unknown): OjsError {
  return new OjsError('unavailable', `${what} is unavailable`, { cause });
}
