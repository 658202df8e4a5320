import { isAbortError } from 'abort-controller-x';
import type { CallContext, ServerMiddleware, ServerMiddlewareCall } from 'nice-grpc';
import { shuttingDown } from './shutting-down';

/** What a long-lived call (the health Watch stream) calls to be ended when the server stops. */
export interface TerminatorContext {
  abortOnTerminate(): void;
}

export type TerminatorMiddleware = ServerMiddleware<TerminatorContext> & {
  /** Aborts every call that asked for it; they end with UNAVAILABLE. */
  terminate(): void;
};

/**
 * Lets endless calls end on shutdown instead of holding it up. It provides
 * the `abortOnTerminate` hook that nice-grpc-server-health's Watch calls
 * (the hook of nice-grpc's terminator middleware, which our registry does
 * not carry); the server's own streams are ended by its shutdown
 * (BeatStreams.endAll, WorkerStreams.endAll, OperatorServiceHandlers.endStreams).
 */
export function terminatorMiddleware(): TerminatorMiddleware {
  const marked = new Set<AbortController>();
  let isTerminated = false;
  async function* middleware<Request, Response>(call: ServerMiddlewareCall<Request, Response, TerminatorContext>, context: CallContext) {
    const controller = new AbortController();
    const abortWithCall = (): void => controller.abort();
    context.signal.addEventListener('abort', abortWithCall);
    const abortOnTerminate = (): void => {
      if (isTerminated) controller.abort();
      else marked.add(controller);
    };
    try {
      return yield* call.next(call.request, { ...context, signal: controller.signal, abortOnTerminate });
    } catch (error) {
      if (isTerminated && isAbortError(error) && !context.signal.aborted) throw shuttingDown();
      throw error;
    } finally {
      marked.delete(controller);
      context.signal.removeEventListener('abort', abortWithCall);
    }
  }
  return Object.assign(middleware, {
    terminate(): void {
      isTerminated = true;
      for (const controller of marked) controller.abort();
      marked.clear();
    },
  });
}
