import { ServerError, type CallContext, type ServerMiddleware, type ServerMiddlewareCall } from 'nice-grpc';
import type { AuthContext } from './auth-context';
import { decoded, type CallGate } from './call-gate';
import { niceGrpcRequestMetadata } from './request-metadata';

/**
 * Wraps every call nice-grpc serves, in one layer (a layer is a generator
 * every message of a stream passes through): the call gate's headers and
 * admission (call-gate.ts), the caller's principal in the context, and
 * whatever is thrown turned into the client-facing status with its
 * trailers (error details, retry-after).
 */
export function ojsServerMiddleware(gate: CallGate): ServerMiddleware {
  return async function* ojsMiddleware<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
    const metadata = niceGrpcRequestMetadata(context.metadata);
    for (const [key, value] of gate.responseHeaders(metadata)) context.header.set(key, value);
    let release: (() => void) | undefined;
    try {
      const admission = gate.admit(call.method, call.requestStream ? undefined : call.request, metadata, context.peer);
      release = admission.release;
      const request = call.requestStream ? decodedStream(call.request) : call.request;
      if (admission.principal === undefined) return yield* call.next(request, context);
      const authenticated: CallContext & AuthContext = { ...context, principal: admission.principal };
      return yield* call.next(request, authenticated);
    } catch (error) {
      const failure = gate.failure(error, call.method.path);
      if (failure.statusDetails !== undefined) context.trailer.set('grpc-status-details-bin', failure.statusDetails);
      if (failure.retryAfter !== undefined) context.trailer.set('retry-after', failure.retryAfter);
      throw new ServerError(failure.code, failure.message);
    } finally {
      release?.();
    }
  };
}

async function* decodedStream<Request>(requests: AsyncIterable<Request>): AsyncGenerator<Request> {
  for await (const request of requests) yield decoded(request);
}
