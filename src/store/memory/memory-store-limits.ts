import { storeFull } from '../../domain/errors';

/** How much the memory store may hold; enqueues beyond either bound are refused. */
export interface MemoryStoreLimits {
  maxJobs: number;
  /** In the measure of stored-size.ts: roughly the jobs' JSON bytes. */
  maxBytes: number;
}

export const DEFAULT_MEMORY_STORE_LIMITS: Readonly<MemoryStoreLimits> = Object.freeze({ maxJobs: 1_000_000, maxBytes: 512 * 1024 * 1024 });

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
