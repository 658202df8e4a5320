import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Job } from '../../gen/ojs/server/v1/job';
import { EnqueueRequest } from '../../gen/ojs/server/v1/job_service';
import { parseIsoDuration } from '../../src/domain/iso-duration';
import { checkJson, checkJsonObject } from '../../src/domain/json';
import { MAX_RETRY_INTERVAL_MS, META_MAX_BYTES, TIMESTAMP_MAX_MS, TIMESTAMP_MIN_MS } from '../../src/domain/limits';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-policy';
import { FIELD_PATHS, type EnvelopeCase } from './envelope-arbitraries';
import { enqueueRequestBytes, withSecondsNanos } from './raw-protobuf';

/**
 * What the server must answer to an Enqueue of generated envelopes. It
 * judges what the server's decoder produces from the bytes (the generated
 * ts-proto decoder, the contract's codec), so the verdict is about the same
 * values the server sees: a timestamp whose seconds no Date holds arrives
 * as NaN, one beyond the safe integer range makes the whole request
 * undecodable. Sizes are measured with the domain's own measure (json.ts,
 * unit-tested on its own).
 */

/** An envelope as it is sent. */
export interface SentEnvelope {
  case: EnvelopeCase;
  bytes: Uint8Array;
  /** The id the client chose, when it chose a valid one. */
  clientId?: string;
}

/** The server's verdict on one envelope of an Enqueue that decodes. */
export interface EnvelopeVerdict {
  /** Fields (under jobs[i]) that are invalid: a refusal may name only these, and must name one of them. */
  invalid: string[];
  /** Args and meta together are over the job size limit. */
  isTooLarge: boolean;
}

export type EnqueueVerdict = { isDecodable: false } | { isDecodable: true; envelopes: EnvelopeVerdict[] };

/** The envelope's bytes: the generated fields through the generated encoder, its timestamps appended raw. */
export function sendEnvelope(envelopeCase: EnvelopeCase): SentEnvelope {
  const { spec } = envelopeCase;
  const id = spec.id === '<fresh>' ? uuidv7() : spec.id === '<long>' ? 'a'.repeat(40_000) : spec.id;
  const args = envelopeCase.paddingChars > 0 ? [...spec.args, 'x'.repeat(envelopeCase.paddingChars)] : spec.args;
  const meta = envelopeCase.metaPaddingChars > 0 ? { ...spec.meta, pad: 'm'.repeat(envelopeCase.metaPaddingChars) } : spec.meta;
  const job = Job.fromPartial({ ...envelopeCase.ignored, ...spec, id, args, meta });
  let bytes: Uint8Array = Job.encode(job).finish();
  if (envelopeCase.scheduledAt !== undefined) bytes = withSecondsNanos(bytes, 9, envelopeCase.scheduledAt);
  if (envelopeCase.expiresAt !== undefined) bytes = withSecondsNanos(bytes, 10, envelopeCase.expiresAt);
  for (const [field, value] of envelopeCase.ignoredTimestamps) bytes = withSecondsNanos(bytes, field, value);
  return spec.id === '<fresh>' ? { case: envelopeCase, bytes, clientId: id } : { case: envelopeCase, bytes };
}

/** The request carrying `envelopes`, and the verdict the server must reach on it. */
export function judgeEnqueue(envelopes: readonly SentEnvelope[], pending: boolean, limits: { maxJobBytes: number; jobTimeoutMs: number }) {
  const request = enqueueRequestBytes(
    envelopes.map((e) => e.bytes),
    pending,
  );
  let decoded: EnqueueRequest;
  try {
    decoded = EnqueueRequest.decode(request);
  } catch {
    return { request, verdict: { isDecodable: false } satisfies EnqueueVerdict };
  }
  const verdict: EnqueueVerdict = {
    isDecodable: true,
    envelopes: decoded.jobs.map((job, i) => judgeEnvelope(job, envelopes[i]!.case, limits)),
  };
  return { request, verdict };
}

function judgeEnvelope(job: Job, envelopeCase: EnvelopeCase, limits: { maxJobBytes: number; jobTimeoutMs: number }): EnvelopeVerdict {
  const invalid = envelopeCase.invalidFields.filter((key) => key !== 'retry').map((key) => FIELD_PATHS[key]);
  invalid.push(...envelopeCase.invalidRetryFields);
  for (const [path, date] of [
    ['scheduled_at', job.scheduledAt],
    ['expires_at', job.expiresAt],
  ] as const) {
    if (date !== undefined && !isStorableTime(date.getTime())) invalid.push(path);
  }
  // A limit of 0 means the default; a negative one is refused and the default used.
  const timeoutMs = job.timeout > 0 ? job.timeout * 1000 : limits.jobTimeoutMs;
  if (job.totalTimeout > 0 && job.totalTimeout * 1000 < timeoutMs) invalid.push('total_timeout');
  if (job.retry !== undefined) {
    const initialMs = intervalMs(job.retry.initialInterval) ?? DEFAULT_RETRY_POLICY.initialIntervalMs;
    const maxMs = intervalMs(job.retry.maxInterval) ?? DEFAULT_RETRY_POLICY.maxIntervalMs;
    if (maxMs < initialMs) invalid.push('retry.max_interval');
  }
  let bytes = 0;
  for (const arg of job.args) {
    const check = checkJson(arg, 1);
    if (check.ok) bytes += check.bytes;
  }
  if (job.meta !== undefined) {
    const check = checkJsonObject(job.meta);
    if (check.ok && check.bytes > META_MAX_BYTES) invalid.push('meta');
    else if (check.ok) bytes += check.bytes;
  }
  return { invalid, isTooLarge: bytes > limits.maxJobBytes };
}

function isStorableTime(ms: number): boolean {
  return Number.isInteger(ms) && ms >= TIMESTAMP_MIN_MS && ms <= TIMESTAMP_MAX_MS;
}

/** A retry interval's milliseconds when it is a valid one, else undefined (the default applies). */
function intervalMs(text: string | undefined): number | undefined {
  const ms = text === undefined ? undefined : parseIsoDuration(text);
  return ms !== undefined && ms > 0 && ms <= MAX_RETRY_INTERVAL_MS ? ms : undefined;
}

/** Whether a field a refusal names is one of `invalid` fields of envelope `index`. */
function namesInvalidField(field: string, index: number, invalid: readonly string[]): boolean {
  const base = `jobs[${index}].`;
  if (!field.startsWith(base)) return false;
  const rest = field.slice(base.length);
  return invalid.some((path) => rest === path || rest.startsWith(`${path}[`) || rest.startsWith(`${path}.`));
}

/** What the server must answer: a status (OK: accepted), and which fields a refusal may name. */
export interface ExpectedAnswer {
  code: Status;
  /** ErrorInfo reasons the answer may carry ('' for none). */
  reasons: string[];
  /** Whether a refusal may name `field`. */
  mayName: (field: string) => boolean;
}

/**
 * The answer to an Enqueue the verdict calls for. An undecodable request is
 * refused naming only "request"; invalid envelopes with INVALID_ARGUMENT
 * naming only invalid fields (one may hide others: the server need not list
 * every one); otherwise a job over the size limit with RESOURCE_EXHAUSTED.
 */
export function expectedAnswer(verdict: EnqueueVerdict): ExpectedAnswer {
  if (!verdict.isDecodable) return { code: Status.INVALID_ARGUMENT, reasons: ['invalid_request'], mayName: (field) => field === 'request' };
  const { envelopes } = verdict;
  if (envelopes.some((envelope) => envelope.invalid.length > 0)) {
    return {
      code: Status.INVALID_ARGUMENT,
      reasons: ['invalid_request', 'invalid_payload'],
      mayName: (field) => envelopes.some((envelope, i) => namesInvalidField(field, i, envelope.invalid)),
    };
  }
  const tooLarge = envelopes.flatMap((envelope, i) => (envelope.isTooLarge ? [`jobs[${i}].args`] : []));
  if (tooLarge.length > 0)
    return { code: Status.RESOURCE_EXHAUSTED, reasons: ['payload_too_large'], mayName: (field) => tooLarge.includes(field) };
  return { code: Status.OK, reasons: [''], mayName: () => false };
}
