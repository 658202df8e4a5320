import type { MethodDescriptor } from 'nice-grpc';
import type { Logger } from '../../app/ports';
import { invalidRequest } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import type { Authenticate } from './authentication';
import { admitCall } from './call-admission';
import { toClientFailure, type ClientFailure } from './error-mapping';
import { UndecodableRequest } from './guarded-decoding';
import type { PrincipalUsage } from './principal-usage';
import type { RequestMetadata } from './request-metadata';

export interface CallGateOptions {
  logger: Logger;
  serverVersion: string;
  /** Who a call runs as (authentication.ts); without, every call runs as ANONYMOUS. */
  authenticate?: Authenticate;
  /** What each principal may hold (call-admission.ts); without, nothing is limited. */
  usage?: PrincipalUsage;
}

/** The parts of a method the gate looks at. */
export type GatedMethod = Pick<MethodDescriptor, 'path' | 'requestStream' | 'responseStream'>;

/** The gated view of a method of a ts-proto service definition. */
export function gatedMethod(
  service: { fullName: string },
  method: { name: string; requestStream: boolean; responseStream: boolean },
): GatedMethod {
  return { path: `/${service.fullName}/${method.name}`, requestStream: method.requestStream, responseStream: method.responseStream };
}

/** A call let in: who it runs as (undefined for an open call) and what to run however it ends. */
export interface Admission {
  principal: Principal | undefined;
  release: (() => void) | undefined;
}

/**
 * What every call goes through, whichever library serves it (nice-grpc's
 * methods through server-middleware.ts, the worker streams on grpc-js
 * through direct-call.ts): the headers it answers with, its
 * admission, and what the client is sent when it fails.
 */
export class CallGate {
  constructor(private readonly options: CallGateOptions) {}

  /** Echoes x-ojs-request-id and announces the server version (ojs-grpc-binding section 9). */
  responseHeaders(metadata: RequestMetadata): [key: string, value: string][] {
    const headers: [string, string][] = [['x-ojs-server-version', this.options.serverVersion]];
    const requestId = metadata.text('x-ojs-request-id');
    if (requestId !== undefined) headers.push(['x-ojs-request-id', requestId]);
    return headers;
  }

  /**
   * Refuses a request whose bytes did not decode, then authenticates the
   * caller and holds it to its limits. `request` is the call's one request,
   * undefined for a streamed one (each of whose messages goes through
   * decoded()). Throws the refusal.
   */
  admit(method: GatedMethod, request: unknown, metadata: RequestMetadata, peer: string): Admission {
    decoded(request);
    const principal = this.options.authenticate?.(method.path, metadata);
    const { usage } = this.options;
    const release = principal === undefined || usage === undefined ? undefined : admitCall(usage, principal, method, request, peer);
    return { principal, release };
  }

  failure(error: unknown, methodPath: string): ClientFailure {
    return toClientFailure(error, methodPath, this.options.logger);
  }
}

/** The request, or the refusal of one whose bytes did not decode (guarded-decoding.ts). */
export function decoded<Request>(request: Request | UndecodableRequest): Request {
  if (request instanceof UndecodableRequest) throw invalidRequest('request', `the message could not be decoded (${request.reason})`);
  return request;
}
