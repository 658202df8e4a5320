import { BinaryReader } from '@bufbuild/protobuf/wire';
import { Status } from 'nice-grpc';
import { Any, BadRequest, ErrorInfo, RetryInfo } from 'nice-grpc-error-details';
import { OjsError, type ErrorCode } from '../../../src/domain/errors';
import { ERROR_DOMAIN, STATUS_BY_CODE, toClientFailure, toRichServerError } from '../../../src/transport/grpc/error-mapping';
import { RecordingLogger } from '../../support/silent-logger';
import { objectContaining } from '../../support/matchers';

/** ojs-grpc-binding section 7.1. */
const EXPECTED: Record<ErrorCode, Status> = {
  invalid_request: Status.INVALID_ARGUMENT,
  invalid_payload: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  duplicate: Status.ALREADY_EXISTS,
  invalid_state: Status.FAILED_PRECONDITION,
  payload_too_large: Status.RESOURCE_EXHAUSTED,
  result_too_large: Status.RESOURCE_EXHAUSTED,
  queue_full: Status.RESOURCE_EXHAUSTED,
  out_of_range: Status.OUT_OF_RANGE,
  permission_denied: Status.PERMISSION_DENIED,
  unavailable: Status.UNAVAILABLE,
  backend_error: Status.INTERNAL,
  unauthenticated: Status.UNAUTHENTICATED,
  rate_limited: Status.RESOURCE_EXHAUSTED,
};

describe('mapping OJS errors to gRPC', () => {
  it.each(Object.entries(EXPECTED) as [ErrorCode, Status][])('maps %s to gRPC status %i with ErrorInfo', (code, status) => {
    expect(STATUS_BY_CODE[code]).toBe(status);
    const error = toRichServerError(new OjsError(code, 'what happened', { metadata: { job_id: 'j1' } }));
    expect(error.code).toBe(status);
    expect(error.details).toBe('what happened');
    const info = error.extra.find((d) => d.$type === ErrorInfo.$type) as ErrorInfo;
    expect(info).toMatchObject({
      reason: code,
      domain: ERROR_DOMAIN,
      metadata: { job_id: 'j1', retryable: String(code === 'unavailable' || code === 'queue_full' || code === 'rate_limited') },
    });
  });

  it('adds a BadRequest detail listing the bad fields', () => {
    const error = toRichServerError(
      new OjsError('invalid_payload', 'bad', { fieldViolations: [{ field: 'jobs[0].type', description: 'x' }] }),
    );
    const badRequest = error.extra.find((d) => d.$type === BadRequest.$type) as BadRequest;
    expect(badRequest.fieldViolations).toEqual([expect.objectContaining({ field: 'jobs[0].type', description: 'x' })]);
  });

  it('adds a RetryInfo detail with the delay when the error knows how long to wait, and none otherwise', () => {
    const error = toRichServerError(new OjsError('rate_limited', 'slow down', { retryDelayMs: 2_250 }));
    expect(error.extra.find((d) => d.$type === RetryInfo.$type)).toMatchObject({ retryDelay: { seconds: 2, nanos: 250_000_000 } });
    expect(toRichServerError(new OjsError('rate_limited', 'slow down')).extra.some((d) => d.$type === RetryInfo.$type)).toBe(false);
  });

  it('reports an unexpected error as INTERNAL without its details, and logs it', () => {
    const logger = new RecordingLogger();
    const failure = toClientFailure(new TypeError('secret internals'), '/svc/Method', logger);
    expect(failure).toMatchObject({ code: Status.INTERNAL, message: 'internal error' });
    expect(decodeStatus(failure.statusDetails!).reasons).toEqual(['backend_error']);
    expect(logger.entries).toEqual([expect.objectContaining({ level: 'error', context: objectContaining({ method: '/svc/Method' }) })]);
  });

  it('sends google.rpc.Status with the details in its trailer, and retry-after when the wait is known', () => {
    const error = new OjsError('rate_limited', 'slow down', {
      retryDelayMs: 2_250,
      fieldViolations: [{ field: 'jobs', description: 'x' }],
    });
    const failure = toClientFailure(error, '/svc/Method', new RecordingLogger());
    expect(failure).toMatchObject({ code: Status.RESOURCE_EXHAUSTED, message: 'slow down', retryAfter: '2.250' });
    expect(decodeStatus(failure.statusDetails!)).toEqual({
      code: Status.RESOURCE_EXHAUSTED,
      message: 'slow down',
      types: [ErrorInfo.$type, RetryInfo.$type, BadRequest.$type].map((type) => `type.googleapis.com/${type}`),
      reasons: ['rate_limited'],
    });
    expect(toClientFailure(new OjsError('not_found', 'gone'), '/svc/Method', new RecordingLogger()).retryAfter).toBeUndefined();
  });

  it('passes a cancellation through as CANCELLED, without details', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(toClientFailure(abort, '/svc/Method', new RecordingLogger())).toEqual({
      code: Status.CANCELLED,
      message: 'The operation was cancelled',
    });
  });
});

/** google.rpc.Status read field by field: its code, message, the type of each detail and the reason of its ErrorInfo. */
function decodeStatus(bytes: Uint8Array): { code: number; message: string; types: string[]; reasons: string[] } {
  const reader = new BinaryReader(bytes);
  const status = { code: 0, message: '', types: [] as string[], reasons: [] as string[] };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === 8) status.code = reader.int32();
    else if (tag === 18) status.message = reader.string();
    else if (tag === 26) {
      const detail = Any.decode(reader.bytes());
      status.types.push(detail.typeUrl);
      if (detail.typeUrl.endsWith(ErrorInfo.$type)) status.reasons.push(ErrorInfo.decode(detail.value).reason);
    } else throw new Error(`unexpected tag ${tag}`);
  }
  return status;
}
