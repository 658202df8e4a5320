import type { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { ANONYMOUS } from '../../domain/principal';
import { decoded, gatedMethod, type CallGate } from './call-gate';
import type { CallerContext } from './caller-context';
import { serializeComplete } from './encoded-messages';
import { gateHeaders, grpcJsStatus } from './grpc-js-status';
import type { UndecodableRequest } from './guarded-decoding';
import { grpcJsRequestMetadata } from './request-metadata';
import type { DirectMethod } from './service-host';

/** A unary method of a ts-proto service definition. */
export interface UnaryMethodDefinition<Request, Response> {
  name: string;
  requestType: { decode(input: BinaryReader | Uint8Array, length?: number): Request };
  requestStream: false;
  responseType: { encode(message: Response, writer?: BinaryWriter): BinaryWriter };
  responseStream: false;
}

/**
 * A unary method served on grpc-js directly (service-host.ts), for the
 * methods every job goes through (Enqueue, Ack, Fail): on nice-grpc each
 * call also cost a call context (metadata wrappers, an AbortController),
 * a middleware generator and a copy of the response. Taken through the
 * call gate as the middleware takes nice-grpc's calls: it answers with the
 * gate's headers, runs `handle` as the principal the gate found, holds its
 * admission until `handle` settles, and fails with the status (and
 * trailers) the gate gives the error. `handle` answers with complete
 * messages, encoded as they are by `responseType` (the method's own
 * unless given).
 */
export function directUnary<Request, Response>(
  gate: CallGate,
  service: { fullName: string },
  method: UnaryMethodDefinition<Request, Response>,
  handle: (request: Request, caller: CallerContext) => Promise<Response>,
  responseType: UnaryMethodDefinition<Request, Response>['responseType'] = method.responseType,
): DirectMethod {
  const gated = gatedMethod(service, method);
  const answer = async (
    call: ServerUnaryCall<Request | UndecodableRequest, Response>,
    callback: sendUnaryData<Response>,
  ): Promise<void> => {
    const metadata = grpcJsRequestMetadata(call.metadata);
    // The headers go with the answer, in one write with it and the trailers, as nice-grpc sends them.
    const headers = gateHeaders(gate, metadata);
    let response: Response;
    let release: (() => void) | undefined;
    try {
      const admission = gate.admit(gated, call.request, metadata, call.getPeer());
      release = admission.release;
      // Admitted, the request is one that decoded: decoded() only narrows its type here.
      response = await handle(decoded(call.request), { principal: admission.principal ?? ANONYMOUS, metadata });
    } catch (error) {
      call.sendMetadata(headers);
      callback(grpcJsStatus(gate.failure(error, gated.path)));
      return;
    } finally {
      release?.();
    }
    call.sendMetadata(headers);
    callback(null, response);
  };
  return {
    handler: (call: ServerUnaryCall<Request | UndecodableRequest, Response>, callback: sendUnaryData<Response>) =>
      void answer(call, callback),
    serializeResponse: (message: Response) => serializeComplete(responseType, message),
  };
}
