import { Status, ServerError } from 'nice-grpc';
import { isAbortError } from 'abort-controller-x';
import { BadRequest, ErrorInfo, RichServerError, type ErrorDetails } from 'nice-grpc-error-details';
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
  unavailable: Status.UNAVAILABLE,
  backend_error: Status.INTERNAL,
};

/** An OjsError as a gRPC error with google.rpc.ErrorInfo (and BadRequest for bad fields). */
export function toRichServerError(error: OjsError): RichServerError {
  const details: ErrorDetails[] = [
    ErrorInfo.fromPartial({
      reason: error.code,
      domain: ERROR_DOMAIN,
      metadata: { ...error.metadata, retryable: String(error.retryable) },
    }),
  ];
  if (error.fieldViolations.length > 0) {
    details.push(BadRequest.fromPartial({ fieldViolations: error.fieldViolations.map((v) => ({ ...v })) }));
  }
  return new RichServerError(STATUS_BY_CODE[error.code], error.message, details);
}

/**
 * Maps whatever a handler threw to what the client sees. OjsErrors carry
 * their code; gRPC errors and cancellations pass through; anything else is
 * a bug, logged here and reported as INTERNAL without internals.
 */
export function toClientError(error: unknown, method: string, logger: Logger): unknown {
  if (error instanceof OjsError) return toRichServerError(error);
  if (error instanceof ServerError || isAbortError(error)) return error;
  logger.error({ err: error, method }, 'unexpected error while handling a call');
  return toRichServerError(new OjsError('backend_error', 'internal error'));
}
