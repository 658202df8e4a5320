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
