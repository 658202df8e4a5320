import type { CallContext, ServerMiddleware, ServerMiddlewareCall } from 'nice-grpc';
import { invalidRequest, OjsError } from '../../domain/errors';
import type { Logger } from '../../app/ports';
import { toClientError } from './error-mapping';
import { UndecodableRequest } from './guarded-decoding';

/**
 * Wraps every call: echoes x-ojs-request-id and announces the server version
 * (ojs-grpc-binding section 9), refuses requests whose bytes did not decode,
 * and turns whatever a handler throws into the client-facing error (with a
 * retry-after trailer when the error says how long to wait).
 */
export function ojsServerMiddleware(logger: Logger, serverVersion: string): ServerMiddleware {
  return async function* ojsMiddleware<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
    const requestId = context.metadata.get('x-ojs-request-id');
    if (requestId !== undefined) context.header.set('x-ojs-request-id', requestId);
    context.header.set('x-ojs-server-version', serverVersion);
    try {
      return yield* call.next(call.requestStream ? decodedStream(call.request) : decoded(call.request), context);
    } catch (error) {
      // ojs-grpc-binding 9.3: the wait in seconds, for clients that read metadata rather than google.rpc.RetryInfo.
      if (error instanceof OjsError && error.retryDelayMs !== undefined)
        context.trailer.set('retry-after', (error.retryDelayMs / 1_000).toFixed(3));
      throw toClientError(error, call.method.path, logger);
    }
  };
}

function decoded<Request>(request: Request): Request {
  if (request instanceof UndecodableRequest) throw invalidRequest('request', `the message could not be decoded (${request.reason})`);
  return request;
}

async function* decodedStream<Request>(requests: AsyncIterable<Request>): AsyncGenerator<Request> {
  for await (const request of requests) yield decoded(request);
}
