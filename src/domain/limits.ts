/**
 * Bounds on everything a client can make the server hold, do or send. Each
 * is a promise of the server: whatever passes them can be stored, read back
 * and delivered to a standard gRPC client; whatever does not is refused at
 * the edge with a status naming the field. README.md lists them.
 */

/** gRPC clients refuse messages above 4 MiB unless told otherwise. */
export const CLIENT_MESSAGE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Most bytes of deliveries in one Fetch message: the client's default limit
 * minus room for framing. One claim never takes more (a first job aside),
 * so one claim's reply from the store is bounded too.
 */
export const DELIVERY_BUDGET_BYTES = CLIENT_MESSAGE_LIMIT_BYTES - 64 * 1024;

/** Most jobs in one Enqueue: an enqueue is atomic, so it is one store operation of bounded length. */
export const MAX_ENQUEUE_BATCH = 1_000;
/** Most items in one AckBatch or FailBatch (a worker never holds more jobs than this). */
export const MAX_SETTLE_BATCH = 10_000;
/** Settlements are applied in store operations of at most this many items. */
export const SETTLE_CHUNK = 1_000;

/** Most queues a worker consumes. */
export const MAX_QUEUES_PER_WORKER = 100;
/** Most labels a worker carries, and the longest one. */
export const MAX_LABELS_PER_WORKER = 32;
export const LABEL_MAX_CHARS = 128;
export const HOSTNAME_MAX_CHARS = 255;
export const WORKER_ID_MAX_CHARS = 255;
export const LEASE_TOKEN_MAX_CHARS = 128;
/** Job types and queue names (ojs-payload-limits 4.4, 4.5 allow 255 bytes; ojs-core limits queues to 128 characters). */
export const JOB_TYPE_MAX_CHARS = 255;
export const QUEUE_NAME_MAX_CHARS = 128;
export const SCHEMA_MAX_CHARS = 2_048;
export const MAX_NON_RETRYABLE_ERRORS = 100;
export const ERROR_TYPE_MAX_CHARS = 255;

/** The longest Fetch long-poll (max_wait). */
export const MAX_FETCH_WAIT_MS = 24 * 3_600_000;

/**
 * Timestamps the server accepts: from the Unix epoch to the last
 * millisecond of year 9999, the end of the range google.protobuf.Timestamp
 * defines. Every deadline derived from them stays exact in a double.
 */
export const TIMESTAMP_MIN_MS = 0;
export const TIMESTAMP_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Producer-settable envelope fields (ojs-payload-limits 4.3; ojs-core 5). */
export const META_MAX_BYTES = 64 * 1024;
export const SPECVERSION_MAX_CHARS = 64;
/** Retry intervals (ISO 8601 durations) are at most a year: every retry time stays a valid timestamp. */
export const MAX_RETRY_INTERVAL_MS = 365 * 86_400_000;

/** Failures, as stored (ojs-core 8.1 recommends at most 50 frames and 10,000 characters of backtrace). */
export const ERROR_MESSAGE_MAX_CHARS = 10_000;
export const BACKTRACE_MAX_FRAMES = 50;
export const BACKTRACE_MAX_CHARS = 10_000;
export const ERROR_DETAILS_MAX_BYTES = 4 * 1024;
/** Error history kept per job; ojs-retry requires at least the last 10. */
export const ERROR_HISTORY_LIMIT = 20;

/** Progress reports (ojs-progress 5.2 recommends small progress data; checkpoints carry resumable state). */
export const PROGRESS_DATA_MAX_BYTES = 4 * 1024;
export const CHECKPOINT_MAX_BYTES = 64 * 1024;

/**
 * The configurable payload limits, in the measure of json.ts (the larger of
 * a value's JSON and protobuf encodings).
 */
export interface PayloadLimits {
  /** args and meta of one job, together (ojs-payload-limits 4.1: at least 1 MiB). */
  maxJobBytes: number;
  /** A job's result (ojs-results 7.2 recommends 1 MiB). */
  maxResultBytes: number;
}

/**
 * Most bytes of results (their JSON texts) a workflow job's parent_results
 * inlines; beyond, a result is replaced by a stand-in naming its step
 * (domain assembleParentResults, ojs-workflows 7.5). With a job of at most
 * maxJobBytes, a delivery stays within the client's message limit.
 */
export const PARENT_RESULTS_INLINE_BYTES = 1024 * 1024;

export const DEFAULT_PAYLOAD_LIMITS: Readonly<PayloadLimits> = Object.freeze({ maxJobBytes: 1024 * 1024, maxResultBytes: 1024 * 1024 });

/** Bytes a string of `chars` UTF-16 units takes in UTF-8, at most. */
const utf8Bound = (chars: number): number => 3 * chars;

/** The largest one recorded error can be, as protobuf, field keys and lengths included. */
const ERROR_MAX_BYTES =
  utf8Bound(ERROR_TYPE_MAX_CHARS + ERROR_MESSAGE_MAX_CHARS + BACKTRACE_MAX_CHARS) +
  4 * BACKTRACE_MAX_FRAMES +
  ERROR_DETAILS_MAX_BYTES +
  256;

/** Everything of an envelope but args, meta and result, at most: ids, names, schema, the retry policy, times. */
const ENVELOPE_MAX_BYTES =
  utf8Bound(JOB_TYPE_MAX_CHARS + QUEUE_NAME_MAX_CHARS + SCHEMA_MAX_CHARS + SPECVERSION_MAX_CHARS + WORKER_ID_MAX_CHARS) +
  MAX_NON_RETRYABLE_ERRORS * (utf8Bound(ERROR_TYPE_MAX_CHARS) + 3) +
  4 * 1024;

/**
 * The most a job grows beyond its args, meta and result while it lives: its
 * error history (the latest error is stored twice), progress data, the
 * checkpoint, and the rest of the envelope.
 */
export const JOB_GROWTH_MAX_BYTES =
  (ERROR_HISTORY_LIMIT + 1) * ERROR_MAX_BYTES + PROGRESS_DATA_MAX_BYTES + CHECKPOINT_MAX_BYTES + ENVELOPE_MAX_BYTES;

/**
 * Why the limits could let a job grow too large to deliver in one Fetch
 * message or answer in one GetJob, or undefined when they cannot.
 */
export function payloadLimitsProblem(limits: PayloadLimits): string | undefined {
  const room = DELIVERY_BUDGET_BYTES - JOB_GROWTH_MAX_BYTES;
  if (limits.maxJobBytes < 1024 || limits.maxResultBytes < 0) return 'the job limit must be at least 1 KiB, the result limit 0 or more';
  if (limits.maxJobBytes + limits.maxResultBytes > room) {
    return `a job and its result together may be at most ${room} bytes (a job must fit, with its error history and checkpoint, in one 4 MiB gRPC message)`;
  }
  return undefined;
}
