/**
 * Fleet-wide limits of one queue (ojs-rate-limiting 5.1, 5.2, 7.2: queue
 * level), enforced where jobs are claimed so that every worker of every
 * replica together stays within them. A held-back job stays available.
 *
 * - `maxActive`: at most this many of the queue's jobs active at once (0
 *   delivers nothing, like a pause). The queue's own active count is the
 *   counter, moved in the same atomic step as the job, so it cannot drift.
 * - `rate`: at most `limit` of the queue's jobs started in any window of
 *   `periodMs`. The algorithm is a sliding log: the store keeps the start
 *   times of the last window (at most `limit` of them) and a claim at `now`
 *   starts jobs while fewer than `limit` started after `now - periodMs`. So
 *   no window of that length, wherever it begins, ever holds more than
 *   `limit` starts (no 2x burst at a fixed window's edge), and the next slot
 *   opens exactly when the oldest logged start leaves the window.
 */
export interface QueueLimits {
  maxActive?: number;
  rate?: RateLimit;
}

export interface RateLimit {
  limit: number;
  periodMs: number;
}

/** The largest maxActive accepted. */
export const MAX_ACTIVE_LIMIT = 1_000_000;
/** The largest rate limit accepted: it bounds the sliding log a queue keeps. */
export const MAX_RATE_LIMIT = 100_000;
/** The shortest and longest rate windows accepted. */
export const MIN_RATE_PERIOD_MS = 1;
export const MAX_RATE_PERIOD_MS = 86_400_000;

/** What is wrong with limits, naming the field (relative to the limits), or undefined. */
export function queueLimitsProblem(limits: QueueLimits): { field: string; problem: string } | undefined {
  const { maxActive, rate } = limits;
  if (maxActive !== undefined && !isWholeIn(maxActive, 0, MAX_ACTIVE_LIMIT)) {
    return { field: 'max_active', problem: `must be a whole number from 0 to ${MAX_ACTIVE_LIMIT}` };
  }
  if (rate === undefined) return undefined;
  if (!isWholeIn(rate.limit, 1, MAX_RATE_LIMIT))
    return { field: 'rate.limit', problem: `must be a whole number from 1 to ${MAX_RATE_LIMIT}` };
  if (!isWholeIn(rate.periodMs, MIN_RATE_PERIOD_MS, MAX_RATE_PERIOD_MS)) {
    return { field: 'rate.period', problem: `must be from ${MIN_RATE_PERIOD_MS} ms to ${MAX_RATE_PERIOD_MS / 3_600_000} hours` };
  }
  return undefined;
}

/** Whether limits limit anything (no field set means no limits). */
export function hasQueueLimits(limits: QueueLimits): boolean {
  return limits.maxActive !== undefined || limits.rate !== undefined;
}

/**
 * The sliding log's verdict at `now`, given the logged start times still in
 * the window (ascending): how many more jobs may start now, and, when none
 * may, when the next slot opens (the oldest logged start leaves the window).
 */
export function rateWindow(starts: readonly number[], rate: RateLimit, now: number): { slots: number; opensAt?: number } {
  const counted = starts.filter((at) => at > now - rate.periodMs);
  const slots = Math.max(0, rate.limit - counted.length);
  return slots > 0 ? { slots } : { slots, opensAt: counted[counted.length - rate.limit]! + rate.periodMs };
}

/**
 * When a claim starts its jobs: at `now`, or at the newest start logged for
 * the rate-limited queues it claims from when that is later (its replica
 * read the clock before another one's claim that ran first). So a log only
 * grows forward, and no claim's trim drops a start that a claim running
 * after it, with an earlier clock reading, would still have to count.
 */
export function claimTime(now: number, newestStart: number | undefined): number {
  return newestStart === undefined ? now : Math.max(now, newestStart);
}

function isWholeIn(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}
