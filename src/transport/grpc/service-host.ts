import { Server, ServerCredentials, type MethodDefinition, type ServerOptions, type UntypedHandleCall } from '@grpc/grpc-js';
import type { CallContext, CompatServiceDefinition, ServerMiddleware } from 'nice-grpc';
import { createBidiStreamingMethodHandler } from 'nice-grpc/lib/server/handleBidiStreamingCall';
import { createServerStreamingMethodHandler } from 'nice-grpc/lib/server/handleServerStreamingCall';
import { createUnaryMethodHandler } from 'nice-grpc/lib/server/handleUnaryCall';
import { normalizeServiceDefinition, toGrpcJsServiceDefinition } from 'nice-grpc/lib/service-definitions';

/**
 * A method served on grpc-js directly: its handler, and how its responses
 * are serialized. The handler writes complete messages, so they are
 * encoded as they are (serializeComplete), without nice-grpc's copy.
 */
export interface DirectMethod {
  handler: UntypedHandleCall;
  serializeResponse(this: void, message: unknown): Buffer;
}

/**
 * The grpc-js server of the main port. Methods are served by nice-grpc
 * (promises, async iterables, middleware), as its createServer would serve
 * them, except those given as grpc-js handlers of their own: the worker
 * streams, of which a replica holds two per worker for as long as the
 * worker lives (nice-grpc's per-call context, iterators and middleware
 * generators doubled what each one costs; README, Performance).
 * createServer keeps its grpc-js server to itself, hence this assembly.
 */
export class ServiceHost {
  private readonly server: Server;

  constructor(options: ServerOptions) {
    this.server = new Server(options);
  }

  /**
   * Serves `definition`: each method by `implementation` through nice-grpc
   * (wrapped by `middleware`), or by its handler in `direct`, which then
   * does for itself what the middleware does.
   */
  add(
    definition: CompatServiceDefinition,
    implementation: object,
    middleware: ServerMiddleware | undefined,
    direct: Readonly<Record<string, DirectMethod>> = {},
  ): void {
    const methods = normalizeServiceDefinition(definition);
    const grpcJsMethods: Record<string, MethodDefinition<unknown, unknown>> = { ...toGrpcJsServiceDefinition(methods) };
    const handlers: Record<string, UntypedHandleCall> = {};
    for (const [name, method] of Object.entries(methods)) {
      const directMethod = direct[name];
      if (directMethod !== undefined) {
        handlers[name] = directMethod.handler;
        grpcJsMethods[name] = { ...grpcJsMethods[name]!, responseSerialize: directMethod.serializeResponse };
        continue;
      }
      // The implementation's method, bound as nice-grpc's createServer binds it; the definition says which kind it is.
      // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- implementations are typed by nice-grpc's ServiceImplementation at the caller
      const implement = (implementation as Record<string, (request: unknown, context: CallContext) => never>)[name]!.bind(implementation);
      if (!method.requestStream) {
        handlers[name] = method.responseStream
          ? createServerStreamingMethodHandler(method, implement, middleware)
          : createUnaryMethodHandler(method, implement, middleware);
      } else if (method.responseStream) {
        handlers[name] = createBidiStreamingMethodHandler(method, implement, middleware);
      } else {
        throw new Error(`${method.path}: client-streaming methods are not served`);
      }
    }
    this.server.addService(grpcJsMethods, handlers);
  }

  /** Listens on `address` (port 0 picks a free one); resolves with the port. */
  listen(address: string, credentials = ServerCredentials.createInsecure()): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, credentials, (error, port) => (error === null ? resolve(port) : reject(error)));
    });
  }

  /** Refuses new calls and resolves once the calls in flight have ended. */
  shutdown(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.tryShutdown((error) => (error === undefined ? resolve() : reject(error)));
    });
  }

  /** Ends every call and connection at once. */
  forceShutdown(): void {
    this.server.forceShutdown();
  }
}
