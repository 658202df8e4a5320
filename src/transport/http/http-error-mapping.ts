import { OjsError, type ErrorCode } from '../../domain/errors';
import type { Logger } from '../../app/ports';
import type { ApiErrorBody } from './api-types';

/**
 * The one place that decides HTTP statuses for the dashboard's API, as
 * error-mapping.ts does for gRPC: one table per transport, so that a code
 * without an entry does not compile.
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_payload: 400,
  not_found: 404,
  duplicate: 409,
  invalid_state: 409,
  payload_too_large: 413,
  result_too_large: 413,
  queue_full: 503,
  out_of_range: 416,
  permission_denied: 403,
  unavailable: 503,
  backend_error: 500,
  unauthenticated: 401,
  rate_limited: 429,
};

/** An HTTP refusal: its status and JSON body. */
export interface HttpError {
  status: number;
  body: ApiErrorBody;
}

/**
 * Any error as an HTTP answer. An OjsError keeps its code and message;
 * anything else is logged and becomes a generic 500, so internals never leak.
 */
export function toHttpError(error: unknown, logger: Logger): HttpError {
  if (error instanceof OjsError) {
    return {
      status: HTTP_STATUS_BY_CODE[error.code],
      body: { error: { code: error.code, message: error.message, retryable: error.retryable } },
    };
  }
  logger.error({ err: error }, 'dashboard request failed');
  return { status: 500, body: { error: { code: 'backend_error', message: 'internal error', retryable: false } } };
}
