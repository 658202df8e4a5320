import type { Job } from '../../domain/job';

/**
 * What the memory store counts for a job besides its measured fields: the
 * fixed-size part of the envelope (numbers, times, the lease) and the
 * store's own bookkeeping for it, roughly.
 */
export const JOB_ENVELOPE_BYTES = 256;

/**
 * The fields whose size depends on what clients send, measured as UTF-8
 * JSON. Beyond the payloads (args, meta, result, errors, progress data,
 * checkpoint, parent_results) this counts the strings, the retry and unique policies, which a client
 * can also make large (a hundred non-retryable error patterns, a long schema).
 */
const MEASURED_FIELDS = [
  'id',
  'type',
  'queue',
  'schema',
  'args',
  'meta',
  'retry',
  'unique',
  'result',
  'error',
  'errors',
  'progressData',
  'lastCheckpoint',
  'parentResults',
] as const satisfies readonly (keyof Job)[];

/**
 * A job's stored size: roughly its JSON bytes. The memory store bounds the
 * sum of these, and a claim stops before its jobs' sum passes the byte
 * budget of one Fetch message.
 */
export function storedBytes(job: Job): number {
  return JOB_ENVELOPE_BYTES + jsonBytes(MEASURED_FIELDS.map((field) => job[field]));
}

/**
 * How much `patch` changes the stored size of `before`: only the measured
 * fields it replaces are measured (old and new), so a lease renewal costs
 * nothing and an Ack measures the result, not the args.
 */
export function storedBytesDelta(before: Job, patch: Partial<Job>): number {
  let changed: (typeof MEASURED_FIELDS)[number][] | undefined;
  for (const field of MEASURED_FIELDS) {
    if (field in patch && patch[field] !== before[field]) (changed ??= []).push(field);
  }
  if (changed === undefined) return 0;
  return jsonBytes(changed.map((field) => patch[field])) - jsonBytes(changed.map((field) => before[field]));
}

/** UTF-8 bytes of the values' JSON, as one array (one encoding, one count: cheaper than one per value). */
function jsonBytes(values: unknown[]): number {
  // Buffer.byteLength counts UTF-8 bytes without encoding the string.
  return Buffer.byteLength(JSON.stringify(values), 'utf8');
}
