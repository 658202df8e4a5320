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

export function fromDuration(duration: Duration | undefined): number | undefined {
  return duration === undefined ? undefined : duration.seconds * 1000 + Math.round(duration.nanos / 1_000_000);
}
