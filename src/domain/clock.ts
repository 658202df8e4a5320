/**
 * Clock is the only source of the current time in the server: epoch
 * milliseconds. Production uses {@link systemClock}; tests inject a manual
 * clock so that every time rule (backoff, leases, heartbeats) is exercised
 * without waiting.
 */
export interface Clock {
  now(): number;
  /**
   * Calls `callback` once the clock reads `at` or later (a manual clock:
   * when a test moves it there). Returns the cancel. For wake-ups whose
   * time is a store time, e.g. when a queue's rate window reopens.
   */
  at(at: number, callback: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  at(at, callback) {
    const timer = setTimeout(callback, Math.max(0, at - Date.now()));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
