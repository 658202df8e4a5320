import { HandlerCode, type JobError } from '../gen/ojs/server/v1/job';
import type { SettlementOutcome } from './settlements';

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

/**
 * The failure to report instead of an ack the server refused, or undefined
 * when the refusal is not about the result. A result over the server's
 * limit is refused and the job left active (ojs-results 7.2); failed, it
 * goes to its retry policy now rather than when its timeout passes.
 */
export function failureForRefusedAck(outcome: SettlementOutcome): JobError | undefined {
  if (outcome.ok || outcome.code !== 'result_too_large') return undefined;
  return sdkJobError(
    'result_too_large',
    `the job's result is larger than the server accepts (${outcome.message}); ` +
      'store large results elsewhere (object storage, a database) and return a reference to them',
  );
}

/** Per-item codes of a failure report the server will not take as it is: too large, or malformed. */
const REFUSED_REPORT_CODES: ReadonlySet<string> = new Set(['payload_too_large', 'invalid_request']);
/** The server's rule for error types: at most 255 characters, no control characters. */
// oxlint-disable-next-line no-control-regex -- finding control characters is the point
const ACCEPTED_ERROR_TYPE = /^[^\u0000-\u001f\u007f-\u009f]{1,255}$/;
/** How much of the message a reduced report keeps. */
const REDUCED_MESSAGE_CHARS = 1_000;

/**
 * The failure to report instead of one the server refused for its content
 * (a message over its transport limit, details over their limit, a
 * malformed type), or undefined when the refusal is about something else.
 * Without it the job would sit active until its timeout. The reduced report
 * keeps the handler's verdict, its type when the server accepts that type
 * (so non_retryable_errors still match), and the start of its message.
 */
export function failureForRefusedFail(outcome: SettlementOutcome, refused: JobError): JobError | undefined {
  if (outcome.ok || !REFUSED_REPORT_CODES.has(outcome.code)) return undefined;
  const type = ACCEPTED_ERROR_TYPE.test(refused.type) ? refused.type : 'error_report_refused';
  const message = `${refused.message.slice(0, REDUCED_MESSAGE_CHARS)} (the server refused the full error report: ${outcome.message})`;
  return { ...sdkJobError(type, message), code: refused.code };
}
