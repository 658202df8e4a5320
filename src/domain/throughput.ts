/**
 * Queue throughput (ojs-admin-api queue stats): completed, failed and
 * discarded jobs counted per minute, reported for the last hour. Stores
 * count as they change jobs and keep no more than that hour.
 */

export const MINUTE_MS = 60_000;

/** How many minutes queue stats report: the one holding `now` and those before it. */
export const THROUGHPUT_MINUTES = 60;

/** The start of the minute holding `at` (epoch milliseconds). */
export function minuteOf(at: number): number {
  return at - (at % MINUTE_MS);
}

/** The starts of the minutes reported at `now`, oldest first. */
export function throughputMinutes(now: number): number[] {
  const last = minuteOf(now);
  return Array.from({ length: THROUGHPUT_MINUTES }, (_, i) => last - (THROUGHPUT_MINUTES - 1 - i) * MINUTE_MS);
}
