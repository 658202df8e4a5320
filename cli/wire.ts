/**
 * Fields that hold the user's own data (args, meta, results, checkpoints,
 * error details, event data): passed through untouched, keys and all.
 */
const USER_DATA_FIELDS = new Set(['args', 'meta', 'result', 'progressData', 'lastCheckpoint', 'details', 'data']);

/**
 * A generated message as `--json` prints it: snake_case field names (the
 * OJS JSON wire format, and what grpcurl prints), timestamps as RFC 3339
 * strings, unset fields left out. Enums are turned into names by the views
 * before they get here (enum-names.ts).
 */
export function toWire(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toWire);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .map(([key, field]) => [snakeCase(key), USER_DATA_FIELDS.has(key) ? field : toWire(field)]),
  );
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
