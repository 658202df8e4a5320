import type { Duration } from '../../../gen/google/protobuf/duration';

/** Epoch milliseconds to a protobuf Timestamp (ts-proto maps Timestamp to Date). */
export function toDate(ms: number | undefined): Date | undefined {
  return ms === undefined ? undefined : new Date(ms);
}

export function fromDate(date: Date | undefined): number | undefined {
  return date === undefined ? undefined : date.getTime();
}

export function toDuration(ms: number): Duration {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}

/**
 * Whole milliseconds of a Duration, away from zero: a wait of a nanosecond
 * is one millisecond (not 0, which means "no limit"), and a negative
 * duration stays negative for the domain to refuse.
 */
export function fromDuration(duration: Duration | undefined): number | undefined {
  if (duration === undefined) return undefined;
  const ms = duration.seconds * 1000 + duration.nanos / 1_000_000;
  return ms > 0 ? Math.ceil(ms) : ms < 0 ? Math.floor(ms) : 0;
}
