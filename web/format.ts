/** How long ago (or how long) `ms` milliseconds is, briefly: "4s", "3m 20s", "2h 5m". */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

export function dateTime(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toLocaleString();
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
