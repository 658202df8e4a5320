/** JSON-native values: what OJS allows in args, meta and results. */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Deepest nesting accepted in args, meta and results. */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` is JSON-native: the type guard form of {@link jsonProblem}. */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  return jsonProblem(value, depth) === undefined;
}

/** Whether an object is JSON-native throughout: the type guard form of {@link jsonProblem}. */
export function isJsonObject(value: Readonly<Record<string, unknown>>): value is JsonObject {
  return jsonProblem(value) === undefined;
}

/**
 * Returns a description of why `value` is not JSON-native, or undefined when
 * it is. Non-finite numbers are refused because JSON cannot carry them and
 * the OJS envelope must survive a JSON round trip.
 */
export function jsonProblem(value: unknown, depth = 0): string | undefined {
  if (depth > MAX_JSON_DEPTH) return `nested deeper than ${MAX_JSON_DEPTH} levels`;
  if (value === null) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : 'numbers must be finite (no NaN or Infinity)';
    case 'object': {
      const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
      for (const [key, item] of entries) {
        const problem = jsonProblem(item, depth + 1);
        if (problem !== undefined) return Array.isArray(value) ? `[${String(key)}]: ${problem}` : `.${String(key)}: ${problem}`;
      }
      return undefined;
    }
    case 'bigint':
    case 'function':
    case 'symbol':
    case 'undefined':
    // No other typeof results exist; the default tells the compiler every path returns.
    default:
      return 'value has no JSON-native kind';
  }
}
