/** Seconds, minutes, hours, then days: the largest unit that fits at least once. */
const UNITS: [suffix: string, ms: number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** `at` relative to `nowMs`, as an operator reads it: "3m ago", "in 2h", "now"; "-" when unset. */
export function relativeTime(at: Date | undefined, nowMs: number): string {
  if (at === undefined) return '-';
  const diffMs = nowMs - at.getTime();
  const magnitude = Math.abs(diffMs);
  const unit = UNITS.find(([, ms]) => magnitude >= ms);
  if (unit === undefined) return 'now';
  const amount = `${Math.floor(magnitude / unit[1])}${unit[0]}`;
  return diffMs > 0 ? `${amount} ago` : `in ${amount}`;
}

/** `at` in RFC 3339 and relative to `nowMs`, for one object's fields: "2026-03-01T09:00:00.000Z (in 2h)"; "-" when unset. */
export function exactAndRelativeTime(at: Date | undefined, nowMs: number): string {
  return at === undefined ? '-' : `${at.toISOString()} (${relativeTime(at, nowMs)})`;
}

/** A duration in milliseconds, as relativeTime writes amounts ("3m", "850ms"). */
export function shortDuration(ms: number): string {
  const unit = UNITS.find(([, unitMs]) => ms >= unitMs);
  return unit === undefined ? `${Math.round(ms)}ms` : `${Math.floor(ms / unit[1])}${unit[0]}`;
}
