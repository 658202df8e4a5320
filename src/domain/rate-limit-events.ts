import type { QueueLimits } from './queue-limits';

/**
 * The rate-limit events of ojs-rate-limiting 11.1 for queue limits
 * (queue-limits.ts), and how they are sampled so that a busy limited queue
 * does not flood the event log. A claim that wanted more of a queue's jobs,
 * while some were available, but got none more because of the queue's
 * limits, was held back: that opens an episode, told by one
 * `rate_limit.exceeded`; the first job of the queue a claim starts after it
 * (or clearing the queue's limits) closes it, told by one
 * `rate_limit.released`. A new episode is told only once the sampling
 * window of the last `exceeded` has passed: at most one `exceeded` per
 * queue per window, and one `released` per `exceeded`. Claims held back
 * within a window, or during an open episode, tell nothing.
 *
 * The sampling state lives in the store next to the queue's limits and
 * changes in the claim's own atomic step, so every replica shares it and
 * each episode is told once, whichever replica's claims see it.
 */

/** Which limit held the jobs back: the queue's rate, or its max active (ojs-rate-limiting `strategy`). */
export type RateLimitStrategy = 'rate' | 'concurrency';

/**
 * The shortest sampling window: a rate period shorter than this (down to
 * 1 ms) would otherwise allow an exceeded event every few milliseconds, and
 * limits without a rate have no period of their own.
 */
export const RATE_LIMIT_EVENT_MIN_WINDOW_MS = 1_000;

/** The limit that holds a queue's jobs back, what it allows and where it stands. */
export interface LimitHold {
  strategy: RateLimitStrategy;
  limit: number;
  /** Starts counted in the rate window, or active jobs. */
  current: number;
}

/**
 * Per queue with limits, what its events were so far. Absent: no episode
 * open, and any hold may be told.
 */
export interface LimitEventSampling {
  /** No exceeded is told before this time: the end of the window of the last one. */
  quietUntil: number;
  /** The strategy of the open episode (exceeded told, released not yet). */
  held?: RateLimitStrategy;
}

/** The key the events name a queue's limits by (ojs-rate-limiting 7.1: "queue:<name>"). */
export function rateLimitKey(queue: string): string {
  return `queue:${queue}`;
}

/** How long after an exceeded event no other is told for the same queue: its rate period, at least a second. */
export function limitEventWindowMs(limits: QueueLimits): number {
  return Math.max(limits.rate?.periodMs ?? 0, RATE_LIMIT_EVENT_MIN_WINDOW_MS);
}

/**
 * Which of the limits holds the queue's jobs back when none may start,
 * given its active jobs and the starts its rate window counts; the rate
 * when both do. Undefined when neither does.
 */
export function limitHold(limits: QueueLimits, active: number, countedStarts: number): LimitHold | undefined {
  if (limits.rate !== undefined && countedStarts >= limits.rate.limit) {
    return { strategy: 'rate', limit: limits.rate.limit, current: countedStarts };
  }
  if (limits.maxActive !== undefined && active >= limits.maxActive) {
    return { strategy: 'concurrency', limit: limits.maxActive, current: active };
  }
  return undefined;
}

/**
 * A claim was held back at `now`: the sampling after it, when the hold is
 * told (an exceeded event), or undefined when it is not (an episode is
 * open, or the window of the last exceeded has not passed).
 */
export function sampleHold(
  sampling: LimitEventSampling | undefined,
  hold: LimitHold,
  limits: QueueLimits,
  now: number,
): LimitEventSampling | undefined {
  if (sampling !== undefined && (sampling.held !== undefined || now < sampling.quietUntil)) return undefined;
  return { quietUntil: now + limitEventWindowMs(limits), held: hold.strategy };
}
