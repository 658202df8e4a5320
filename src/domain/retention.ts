/**
 * How long finished jobs stay queryable. Terminal jobs are removed once older
 * than the retention of their state, and beyond `maxJobs` the oldest go
 * first, so that the store's memory stays bounded under any throughput.
 */
export interface RetentionPolicy {
  completedMs: number;
  cancelledMs: number;
  /** Discarded jobs, dead-lettered or not: kept longest, for inspection and RetryJob. */
  discardedMs: number;
  /** Most terminal jobs kept; 0 means no limit. */
  maxJobs: number;
}

export const DEFAULT_RETENTION: Readonly<RetentionPolicy> = Object.freeze({
  completedMs: 3_600_000,
  cancelledMs: 86_400_000,
  discardedMs: 7 * 86_400_000,
  maxJobs: 100_000,
});

/**
 * How long recorded events stay readable (ojs-events 9.3): the newest
 * `maxCount` facts (0 turns the log off), none older than `maxAgeMs`.
 */
export interface EventRetention {
  maxCount: number;
  maxAgeMs: number;
}

export const DEFAULT_EVENT_RETENTION: Readonly<EventRetention> = Object.freeze({ maxCount: 100_000, maxAgeMs: 86_400_000 });
