import { storeFull } from '../../domain/errors';

/** How much the memory store may hold; enqueues beyond either job bound are refused. */
export interface MemoryStoreLimits {
  maxJobs: number;
  /** In the measure of stored-size.ts: roughly the jobs' JSON bytes. */
  maxBytes: number;
  /**
   * Most bytes of facts the event log holds, in the same measure (fact-log.ts):
   * beyond it the oldest facts go, as beyond the retention's count. The
   * store's memory is thus bounded by `maxBytes + maxEventBytes`, whatever
   * the facts carry (long error messages, workers with many queues).
   * Default: an eighth of maxBytes.
   */
  maxEventBytes?: number;
}

/** The event log's default bound: this fraction of maxBytes, on top of it. */
const EVENT_BYTES_SHARE = 1 / 8;

export const DEFAULT_MEMORY_STORE_LIMITS: Readonly<MemoryStoreLimits> = Object.freeze({ maxJobs: 1_000_000, maxBytes: 512 * 1024 * 1024 });

/** The limits with defaults filled in; the log's bound follows maxBytes unless given. */
export function resolveLimits(limits: Partial<MemoryStoreLimits>): Readonly<Required<MemoryStoreLimits>> {
  const maxBytes = limits.maxBytes ?? DEFAULT_MEMORY_STORE_LIMITS.maxBytes;
  return {
    maxJobs: limits.maxJobs ?? DEFAULT_MEMORY_STORE_LIMITS.maxJobs,
    maxBytes,
    maxEventBytes: limits.maxEventBytes ?? Math.floor(maxBytes * EVENT_BYTES_SHARE),
  };
}

/** An amount of jobs: how many, and their stored size. */
export interface JobVolume {
  jobs: number;
  bytes: number;
}

/**
 * Refuses (queue_full, retryable) adding `incoming` to `stored` if that
 * would take the store past a bound; the error names the bound and its limit.
 */
export function checkRoom(limits: Readonly<MemoryStoreLimits>, stored: JobVolume, incoming: JobVolume): void {
  if (stored.jobs + incoming.jobs > limits.maxJobs) {
    throw storeFull('jobs', `it holds ${stored.jobs} jobs and at most ${limits.maxJobs} are allowed; ${incoming.jobs} more would not fit`);
  }
  if (stored.bytes + incoming.bytes > limits.maxBytes) {
    const detail = `it holds ${stored.bytes} bytes of jobs and at most ${limits.maxBytes} are allowed; ${incoming.bytes} more would not fit`;
    throw storeFull('bytes', detail);
  }
}
