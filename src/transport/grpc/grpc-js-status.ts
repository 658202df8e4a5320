import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { Status } from 'nice-grpc';
import type { CallGate } from './call-gate';
import type { ClientFailure } from './error-mapping';
import type { RequestMetadata } from './request-metadata';

/** The headers the gate answers a call with, as grpc-js sends them. */
export function gateHeaders(gate: CallGate, metadata: RequestMetadata): Metadata {
  const headers = new Metadata();
  for (const [key, value] of gate.responseHeaders(metadata)) headers.set(key, value);
  return headers;
}

/** A failure as the status grpc-js ends a call with: code, message, and the trailers (error details, retry-after). */
export function grpcJsStatus(failure: ClientFailure): Partial<StatusObject> {
  const trailers = new Metadata();
  if (failure.statusDetails !== undefined) trailers.set('grpc-status-details-bin', Buffer.from(failure.statusDetails));
  if (failure.retryAfter !== undefined) trailers.set('retry-after', failure.retryAfter);
  return { code: GRPC_JS_CODES[failure.code], details: failure.message, metadata: trailers };
}

/** nice-grpc's status codes (the gate's failures) as grpc-js has them: gRPC's codes, under the same names. */
const GRPC_JS_CODES: Readonly<Record<Status, status>> = {
  [Status.OK]: status.OK,
  [Status.CANCELLED]: status.CANCELLED,
  [Status.UNKNOWN]: status.UNKNOWN,
  [Status.INVALID_ARGUMENT]: status.INVALID_ARGUMENT,
  [Status.DEADLINE_EXCEEDED]: status.DEADLINE_EXCEEDED,
  [Status.NOT_FOUND]: status.NOT_FOUND,
  [Status.ALREADY_EXISTS]: status.ALREADY_EXISTS,
  [Status.PERMISSION_DENIED]: status.PERMISSION_DENIED,
  [Status.RESOURCE_EXHAUSTED]: status.RESOURCE_EXHAUSTED,
  [Status.FAILED_PRECONDITION]: status.FAILED_PRECONDITION,
  [Status.ABORTED]: status.ABORTED,
  [Status.OUT_OF_RANGE]: status.OUT_OF_RANGE,
  [Status.UNIMPLEMENTED]: status.UNIMPLEMENTED,
  [Status.INTERNAL]: status.INTERNAL,
  [Status.UNAVAILABLE]: status.UNAVAILABLE,
  [Status.DATA_LOSS]: status.DATA_LOSS,
  [Status.UNAUTHENTICATED]: status.UNAUTHENTICATED,
};
