import type { CallContext, ServerMiddleware, ServerMiddlewareCall } from 'nice-grpc';
import { invalidRequest, OjsError } from '../../domain/errors';
import type { Logger } from '../../app/ports';
import type { AuthContext } from './auth-context';
import type { Authenticate } from './authentication';
import { admitCall } from './call-admission';
import { toClientError } from './error-mapping';
import { UndecodableRequest } from './guarded-decoding';
import type { PrincipalUsage } from './principal-usage';

export interface ServerMiddlewareOptions {
  logger: Logger;
  serverVersion: string;
  /** Who a call runs as (authentication.ts); without, every call runs as ANONYMOUS. */
  authenticate?: Authenticate;
  /** What each principal may hold (call-admission.ts); without, nothing is limited. */
  usage?: PrincipalUsage;
}

/**
 * Wraps every call, in one layer (a layer is a generator every message of
 * a stream passes through, on each of thousands of worker streams): echoes
 * x-ojs-request-id and announces the server version (ojs-grpc-binding
 * section 9), refuses requests whose bytes did not decode, then
 * authenticates the caller and holds it to its limits, and turns whatever
 * is thrown into the client-facing error (with a retry-after trailer when
 * the error says how long to wait).
 */
export function ojsServerMiddleware(options: ServerMiddlewareOptions): ServerMiddleware {
  const { logger, serverVersion, authenticate, usage } = options;
  return async function* ojsMiddleware<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
    const requestId = context.metadata.get('x-ojs-request-id');
    if (requestId !== undefined) context.header.set('x-ojs-request-id', requestId);
    context.header.set('x-ojs-server-version', serverVersion);
    let release: (() => void) | undefined;
    try {
      const request = call.requestStream ? decodedStream(call.request) : decoded(call.request);
      const principal = authenticate?.(call.method.path, context);
      if (principal === undefined) return yield* call.next(request, context);
      if (usage !== undefined) release = admitCall(usage, principal, call, context.peer);
      const authenticated: CallContext & AuthContext = { ...context, principal };
      return yield* call.next(request, authenticated);
    } catch (error) {
      // ojs-grpc-binding 9.3: the wait in seconds, for clients that read metadata rather than google.rpc.RetryInfo.
      if (error instanceof OjsError && error.retryDelayMs !== undefined)
        context.trailer.set('retry-after', (error.retryDelayMs / 1_000).toFixed(3));
      throw toClientError(error, call.method.path, logger);
    } finally {
      release?.();
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
