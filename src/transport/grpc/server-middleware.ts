import type { CallContext, ServerMiddleware } from 'nice-grpc';
import type { Logger } from '../../app/ports';
import { toClientError } from './error-mapping';

/**
 * Wraps every call: echoes x-ojs-request-id and announces the server version
 * (ojs-grpc-binding section 9), and turns whatever a handler throws into the
 * client-facing error.
 */
export function ojsServerMiddleware(logger: Logger, serverVersion: string): ServerMiddleware {
  return async function* ojsMiddleware(call, context: CallContext) {
    const requestId = context.metadata.get('x-ojs-request-id');
    if (requestId !== undefined) context.header.set('x-ojs-request-id', requestId);
    context.header.set('x-ojs-server-version', serverVersion);
    try {
      return yield* call.next(call.request, context);
    } catch (error) {
      throw toClientError(error, call.method.path, logger);
    }
  };
}
