import { HandlerCode, type JobError } from '../gen/ojs/server/v1/job';

/** What a handler may decide about its failed job, beyond the retry policy (ojs-retry section 7). */
export type FailureCode = 'retry' | 'discard' | 'dead_letter' | 'fail';

const HANDLER_CODES: Record<FailureCode, HandlerCode> = {
  retry: HandlerCode.HANDLER_CODE_RETRY,
  discard: HandlerCode.HANDLER_CODE_DISCARD,
  dead_letter: HandlerCode.HANDLER_CODE_DEAD_LETTER,
  fail: HandlerCode.HANDLER_CODE_FAIL,
};

/**
 * A failure a handler throws on purpose, with the error type the retry
 * policy matches (non_retryable_errors) and, optionally, its verdict:
 * `throw new JobFailure('card declined', { type: 'payment.declined', code: 'discard' })`.
 */
export class JobFailure extends Error {
  readonly type: string;
  readonly code: FailureCode | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: { type?: string; code?: FailureCode; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'JobFailure';
    this.type = options.type ?? 'job_failure';
    this.code = options.code;
    this.details = options.details;
  }
}

/** Why the SDK aborted a handler's signal. */
export type AbortKind = 'timeout' | 'cancelled' | 'reclaimed' | 'shutdown';

/** The reason of an aborted job signal: `ctx.signal.reason`. */
export class JobAborted extends Error {
  constructor(
    readonly kind: AbortKind,
    message: string,
  ) {
    super(message);
    this.name = 'JobAborted';
  }
}

const MAX_FRAMES = 50;

/**
 * The structured error the server records for whatever a handler threw
 * (ojs-core section 8): the type is the JobFailure's type or the error's
 * name, the backtrace the stack frames.
 */
export function toJobError(thrown: unknown): JobError {
  const error = thrown instanceof Error ? thrown : new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown));
  const frames = (error.stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .slice(0, MAX_FRAMES);
  const failure = error instanceof JobFailure ? error : undefined;
  return {
    type: failure?.type ?? (error.name || 'Error'),
    message: error.message,
    backtrace: frames,
    code: failure?.code === undefined ? HandlerCode.HANDLER_CODE_UNSPECIFIED : HANDLER_CODES[failure.code],
    details: failure?.details,
    attempt: 0,
    occurredAt: undefined,
  };
}

/** A failure the SDK reports itself (shutdown, timeout, unknown job type). */
export function sdkJobError(type: string, message: string): JobError {
  return {
    type,
    message,
    backtrace: [],
    code: HandlerCode.HANDLER_CODE_UNSPECIFIED,
    details: undefined,
    attempt: 0,
    occurredAt: undefined,
  };
}
