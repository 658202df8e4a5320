import type { Metadata as GrpcJsMetadata } from '@grpc/grpc-js';
import type { Metadata as NiceGrpcMetadata } from 'nice-grpc';

/**
 * A call's request metadata as the call gate reads it, whichever library
 * carries the call: nice-grpc for most methods, grpc-js for the worker
 * streams (direct-call.ts).
 */
export interface RequestMetadata {
  /** The value of an ASCII key, if the call sent one. */
  text(key: string): string | undefined;
  /** The value of a binary (`-bin`) key, if the call sent one. */
  binary(key: `${string}-bin`): Uint8Array | undefined;
}

export function niceGrpcRequestMetadata(metadata: NiceGrpcMetadata): RequestMetadata {
  return {
    text(key) {
      const value = metadata.get(key);
      return typeof value === 'string' ? value : undefined;
    },
    binary: (key) => metadata.get(key),
  };
}

export function grpcJsRequestMetadata(metadata: GrpcJsMetadata): RequestMetadata {
  return {
    text(key) {
      const [value] = metadata.get(key);
      return typeof value === 'string' ? value : undefined;
    },
    binary(key) {
      const [value] = metadata.get(key);
      return value instanceof Uint8Array ? value : undefined;
    },
  };
}
