import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { Status, ServerError } from 'nice-grpc';
import { isAbortError } from 'abort-controller-x';
import { Any, BadRequest, ErrorInfo, RetryInfo, RichServerError, type ErrorDetails } from 'nice-grpc-error-details';
import { OjsError, type ErrorCode } from '../../domain/errors';
import type { Logger } from '../../app/ports';

/** The ErrorInfo domain of every OJS error (ojs-grpc-binding section 8.4). */
export const ERROR_DOMAIN = 'openjobspec.org';

/**
 * The one place that decides gRPC status codes (ojs-grpc-binding section 7).
 * A code without an entry here does not compile.
 */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, Status>> = {
  invalid_request: Status.INVALID_ARGUMENT,
  invalid_payload: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  duplicate: Status.ALREADY_EXISTS,
  invalid_state: Status.FAILED_PRECONDITION,
  // ojs-errors 5.2: PAYLOAD_TOO_LARGE and QUEUE_FULL are RESOURCE_EXHAUSTED; a too-large result is the same kind of refusal.
  payload_too_large: Status.RESOURCE_EXHAUSTED,
  result_too_large: Status.RESOURCE_EXHAUSTED,
  queue_full: Status.RESOURCE_EXHAUSTED,
  out_of_range: Status.OUT_OF_RANGE,
  permission_denied: Status.PERMISSION_DENIED,
  unavailable: Status.UNAVAILABLE,
  backend_error: Status.INTERNAL,
  unauthenticated: Status.UNAUTHENTICATED,
  // ojs-grpc-binding 7.1: a rate (or concurrency) limit is RESOURCE_EXHAUSTED, with RetryInfo when the wait is known (8.4).
  rate_limited: Status.RESOURCE_EXHAUSTED,
};

/**
 * An error travels in gRPC trailers, which clients cap at a few kilobytes
 * (grpc-js 8 KiB, grpc-go 16 KiB; the message is percent-encoded, so it may
 * triple): a status past that is never delivered and the call hangs. These
 * bound what one error carries, whatever the request was.
 */
const MESSAGE_MAX_CHARS = 1_000;
const FIELD_VIOLATIONS_MAX = 10;
const VIOLATION_TEXT_MAX_CHARS = 200;

function shorten(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 3)}...`;
}

/** An OjsError as a gRPC error with google.rpc.ErrorInfo (BadRequest for bad fields, RetryInfo for a known wait), within the trailer budget. */
export function toRichServerError(error: OjsError): RichServerError {
  const metadata: Record<string, string> = { retryable: String(error.retryable) };
  for (const [key, value] of Object.entries(error.metadata)) metadata[key] = shorten(value, VIOLATION_TEXT_MAX_CHARS);
  const details: ErrorDetails[] = [ErrorInfo.fromPartial({ reason: error.code, domain: ERROR_DOMAIN, metadata })];
  if (error.retryDelayMs !== undefined) {
    const delayMs = Math.max(0, Math.ceil(error.retryDelayMs));
    details.push(RetryInfo.fromPartial({ retryDelay: { seconds: Math.floor(delayMs / 1_000), nanos: (delayMs % 1_000) * 1e6 } }));
  }
  const violations = error.fieldViolations.slice(0, FIELD_VIOLATIONS_MAX);
  if (violations.length > 0) {
    details.push(
      BadRequest.fromPartial({
        fieldViolations: violations.map((v) => ({
          field: shorten(v.field, VIOLATION_TEXT_MAX_CHARS),
          description: shorten(v.description, VIOLATION_TEXT_MAX_CHARS),
        })),
      }),
    );
  }
  const more = error.fieldViolations.length - violations.length;
  const message =
    more > 0 ? `${shorten(error.message, MESSAGE_MAX_CHARS - 40)} (and ${more} more problems)` : shorten(error.message, MESSAGE_MAX_CHARS);
  return new RichServerError(STATUS_BY_CODE[error.code], message, details);
}

/**
 * What the client is sent for a call that failed: its status and message,
 * and the trailers that say more. Both transports (the middleware of
 * nice-grpc's methods, the worker streams on grpc-js) send exactly this.
 */
export interface ClientFailure {
  code: Status;
  message: string;
  /** google.rpc.Status with the error's details (ojs-grpc-binding 8.4), for the `grpc-status-details-bin` trailer. */
  statusDetails?: Uint8Array;
  /** ojs-grpc-binding 9.3: the wait in seconds, for clients that read metadata rather than google.rpc.RetryInfo. */
  retryAfter?: string;
}

/**
 * Maps whatever a handler threw to what the client sees. OjsErrors carry
 * their code (backend errors are logged with their cause); gRPC errors and
 * cancellations pass through; anything else is a bug, logged here and
 * reported as INTERNAL without internals.
 */
export function toClientFailure(error: unknown, method: string, logger: Logger): ClientFailure {
  if (isAbortError(error)) return { code: Status.CANCELLED, message: 'The operation was cancelled' };
  if (error instanceof ServerError) return { code: error.code, message: error.details };
  let ojsError: OjsError;
  if (error instanceof OjsError) {
    // A backend error is a bug or a refusal of the store: the client sees the code, the operator the cause.
    if (error.code === 'backend_error') logger.error({ err: error, cause: error.cause, method }, 'the store refused a call');
    ojsError = error;
  } else {
    logger.error({ err: error, method }, 'unexpected error while handling a call');
    ojsError = new OjsError('backend_error', 'internal error');
  }
  const rich = toRichServerError(ojsError);
  const failure: ClientFailure = { code: rich.code, message: rich.details, statusDetails: encodeStatus(rich) };
  if (ojsError.retryDelayMs !== undefined) failure.retryAfter = (ojsError.retryDelayMs / 1_000).toFixed(3);
  return failure;
}

/**
 * google.rpc.Status { code = 1; message = 2; repeated google.protobuf.Any details = 3 },
 * as nice-grpc-error-details' middleware writes it (its encoder is not exported;
 * its client middleware reads this back in the tests).
 */
function encodeStatus(error: RichServerError): Uint8Array {
  const writer = new BinaryWriter().uint32(8).int32(error.code).uint32(18).string(error.details);
  for (const detail of error.extra) {
    const value = encodeDetail(detail);
    writer.uint32(26).bytes(Any.encode(Any.fromPartial({ typeUrl: `type.googleapis.com/${detail.$type}`, value })).finish());
  }
  return writer.finish();
}

/** A detail of the kinds toRichServerError adds. */
function encodeDetail(detail: ErrorDetails): Uint8Array {
  if (detail.$type === ErrorInfo.$type) return ErrorInfo.encode(detail).finish();
  if (detail.$type === RetryInfo.$type) return RetryInfo.encode(detail).finish();
  if (detail.$type === BadRequest.$type) return BadRequest.encode(detail).finish();
  throw new Error(`no encoder for error detail ${detail.$type}`);
}
