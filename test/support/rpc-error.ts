import { ClientError, type Status } from 'nice-grpc';
import { BadRequest, ErrorInfo, RichClientError } from 'nice-grpc-error-details';

export interface RpcFailure {
  code: Status;
  message: string;
  /** ErrorInfo.reason: the OJS error code. */
  reason?: string;
  domain?: string;
  metadata: Record<string, string>;
  fields: string[];
}

/** Awaits a call that must fail and returns its status and error details. */
export async function rpcError(call: Promise<unknown> | (() => Promise<unknown>)): Promise<RpcFailure> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (error) {
    if (!(error instanceof ClientError)) throw error;
    const extra = error instanceof RichClientError ? error.extra : [];
    const info = extra.find((d): d is ErrorInfo => d.$type === ErrorInfo.$type);
    const badRequest = extra.find((d): d is BadRequest => d.$type === BadRequest.$type);
    const failure: RpcFailure = {
      code: error.code,
      message: error.details,
      metadata: info?.metadata ?? {},
      fields: badRequest?.fieldViolations.map((v) => v.field) ?? [],
    };
    if (info !== undefined) {
      failure.reason = info.reason;
      failure.domain = info.domain;
    }
    return failure;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
