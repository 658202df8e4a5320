/**
 * What nice-grpc's createServer builds its grpc-js server with: functions
 * marked internal, so its published declarations leave them out. They are
 * declared here as nice-grpc 2.1 defines them, for service-host.ts, which
 * assembles the server itself (createServer keeps its grpc-js server
 * private, and the worker streams are served on grpc-js directly).
 */
import type {
  handleBidiStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
  ServiceDefinition as GrpcJsServiceDefinition,
} from '@grpc/grpc-js';
import type { AnyMethodDefinition, CallContext, CompatServiceDefinition, ServerMiddleware, ServiceDefinition } from 'nice-grpc';

declare module 'nice-grpc/lib/service-definitions' {
  export function normalizeServiceDefinition(definition: CompatServiceDefinition): ServiceDefinition;
  export function toGrpcJsServiceDefinition(definition: ServiceDefinition): GrpcJsServiceDefinition;
}

declare module 'nice-grpc/lib/server/handleUnaryCall' {
  export function createUnaryMethodHandler(
    definition: AnyMethodDefinition,
    implementation: (request: unknown, context: CallContext) => Promise<unknown>,
    middleware?: ServerMiddleware,
  ): handleUnaryCall<unknown, unknown>;
}

declare module 'nice-grpc/lib/server/handleServerStreamingCall' {
  export function createServerStreamingMethodHandler(
    definition: AnyMethodDefinition,
    implementation: (request: unknown, context: CallContext) => AsyncIterable<unknown>,
    middleware?: ServerMiddleware,
  ): handleServerStreamingCall<unknown, unknown>;
}

declare module 'nice-grpc/lib/server/handleBidiStreamingCall' {
  export function createBidiStreamingMethodHandler(
    definition: AnyMethodDefinition,
    implementation: (requests: AsyncIterable<unknown>, context: CallContext) => AsyncIterable<unknown>,
    middleware?: ServerMiddleware,
  ): handleBidiStreamingCall<unknown, unknown>;
}
