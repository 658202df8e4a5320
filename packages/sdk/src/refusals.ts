import { ClientError, Status } from 'nice-grpc';
import { ErrorInfo, RichClientError } from 'nice-grpc-error-details';

/** The OJS error codes of values over one of the server's size limits. */
const SIZE_REASONS: ReadonlySet<string> = new Set(['payload_too_large', 'result_too_large']);

/**
 * Whether the server refused a call for the size of what it was sent: a
 * value over one of its limits (payload_too_large, result_too_large in the
 * ErrorInfo reason), or a message over its transport's receive limit (no
 * reason given). A smaller call may pass. A full store (queue_full, also
 * RESOURCE_EXHAUSTED) is no size refusal: the same call may pass later.
 */
export function isSizeRefusal(error: unknown): error is ClientError {
  if (!(error instanceof ClientError) || error.code !== Status.RESOURCE_EXHAUSTED) return false;
  const reason = errorReason(error);
  return reason === undefined || SIZE_REASONS.has(reason);
}

/**
 * Whether the server refused the caller's credentials: no or an unknown
 * token or certificate (UNAUTHENTICATED), or a principal without the role
 * or queue (PERMISSION_DENIED). Trying again will not help until the
 * credentials or the server's auth file change.
 */
export function isCredentialRefusal(error: unknown): error is ClientError {
  return error instanceof ClientError && (error.code === Status.UNAUTHENTICATED || error.code === Status.PERMISSION_DENIED);
}

/**
 * What a running worker logs when its streams are refused so: loudly, but it
 * keeps trying, as the server reads its auth file again and a rotated token
 * or certificate may be put right without restarting every worker.
 */
export const CREDENTIALS_REFUSED =
  "the server refuses this worker's credentials (token or client certificate); retrying in case they are restored";

/** The OJS error code the server gave for a refusal (its google.rpc.ErrorInfo reason), if it gave one. */
function errorReason(error: ClientError): string | undefined {
  if (!(error instanceof RichClientError)) return undefined;
  return error.extra.find((detail): detail is ErrorInfo => detail.$type === ErrorInfo.$type)?.reason;
}
