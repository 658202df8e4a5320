/**
 * Clock is the only source of the current time in the server: epoch
 * milliseconds. Production uses {@link systemClock}; tests inject a manual
 * clock so that every time rule (backoff, leases, heartbeats) is exercised
 * without waiting.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
