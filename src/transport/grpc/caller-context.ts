import type { Principal } from '../../domain/principal';
import type { RequestMetadata } from './request-metadata';

/** What a handler of a method served on grpc-js directly knows of its caller (direct-unary.ts). */
export interface CallerContext {
  /** Who the call runs as: ANONYMOUS when authentication is off. */
  principal: Principal;
  /** The call's request metadata. */
  metadata: RequestMetadata;
}
