/** JSON-native values: what OJS allows in args, meta and results. */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * Deepest nesting accepted in args, meta and results. The contract's decoder
 * refuses values nested much deeper before they reach the domain.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * A value checked to be JSON-native, with its size: the larger of its UTF-8
 * JSON encoding and its encoding as a google.protobuf.Value, the two forms
 * in which it is stored and sent. Every size limit counts this measure, so
 * a value within a limit fits both a store and a gRPC message.
 */
export interface CheckedJson<T extends JsonValue = JsonValue> {
  value: T;
  bytes: number;
}

export type JsonCheck<T extends JsonValue = JsonValue> = ({ ok: true } & CheckedJson<T>) | { ok: false; problem: string };

/**
 * Checks that `value` is JSON-native (finite numbers, strings, booleans,
 * null, arrays and plain objects of them, nested at most
 * {@link MAX_JSON_DEPTH} deep) and measures it. Negative zero becomes 0: a
 * JSON round trip (the Redis store's) loses its sign, and every store must
 * give back exactly what it was given. The value is copied only then.
 * `depth` is the nesting the value already sits at.
 */
export function checkJson(value: unknown, depth = 0): JsonCheck {
  try {
    const { checked, json, wire } = walk(value, depth);
    return { ok: true, value: checked, bytes: Math.max(json, wire) };
  } catch (error) {
    if (error instanceof JsonProblem) return { ok: false, problem: error.message };
    throw error;
  }
}

/** Like {@link checkJson}, for a value that must be an object (meta, progress data, error details). */
export function checkJsonObject(value: unknown): JsonCheck<JsonObject> {
  const check = checkJson(value);
  if (!check.ok) return check;
  return isObject(check.value) ? { ok: true, value: check.value, bytes: check.bytes } : { ok: false, problem: 'must be an object' };
}

function isObject(value: JsonValue): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

class JsonProblem extends Error {}

interface Walked {
  checked: JsonValue;
  /** UTF-8 bytes of the value's JSON. */
  json: number;
  /** Bytes of the value as a google.protobuf.Value message (without the field key that embeds it). */
  wire: number;
}

function walk(value: unknown, depth: number): Walked {
  if (value === null) return { checked: null, json: 4, wire: 2 };
  switch (typeof value) {
    case 'string': {
      const { json, utf8 } = stringSizes(value);
      return { checked: value, json, wire: 1 + varintBytes(utf8) + utf8 };
    }
    case 'boolean':
      return { checked: value, json: value ? 4 : 5, wire: 2 };
    case 'number':
      if (!Number.isFinite(value)) throw new JsonProblem('numbers must be finite (no NaN or Infinity)');
      return { checked: Object.is(value, -0) ? 0 : value, json: String(value).length, wire: 9 };
    case 'object':
      if (depth >= MAX_JSON_DEPTH) throw new JsonProblem(`nested deeper than ${MAX_JSON_DEPTH} levels`);
      return Array.isArray(value) ? walkArray(value, depth + 1) : walkObject(value, depth + 1);
    case 'undefined':
      // What a google.protobuf.Value without a kind decodes to.
      throw new JsonProblem('a value without a kind (an empty google.protobuf.Value)');
    case 'bigint':
    case 'function':
    case 'symbol':
    default:
      throw new JsonProblem('value has no JSON-native kind');
  }
}

function walkArray(items: readonly unknown[], depth: number): Walked {
  let copy: JsonValue[] | undefined;
  let json = items.length === 0 ? 2 : 1 + items.length;
  let payload = 0;
  items.forEach((item, i) => {
    const walked = within(`[${i}]`, () => walk(item, depth));
    json += walked.json;
    payload += 1 + varintBytes(walked.wire) + walked.wire;
    if (!Object.is(walked.checked, item)) copy ??= items.slice(0, i).map(asIs);
    copy?.push(walked.checked);
  });
  return { checked: copy ?? asIs(items), json, wire: 1 + varintBytes(payload) + payload };
}

function walkObject(object: object, depth: number): Walked {
  const keys = Object.keys(object);
  let copy: JsonObject | undefined;
  let json = keys.length === 0 ? 2 : 1 + keys.length;
  let payload = 0;
  for (const [i, key] of keys.entries()) {
    const item: unknown = Reflect.get(object, key);
    const walked = within(`.${key}`, () => walk(item, depth));
    const keySizes = stringSizes(key);
    json += keySizes.json + 1 + walked.json;
    // A map entry: the key field (left out when empty), then the value field.
    const entry = (key === '' ? 0 : 1 + varintBytes(keySizes.utf8) + keySizes.utf8) + 1 + varintBytes(walked.wire) + walked.wire;
    payload += 1 + varintBytes(entry) + entry;
    if (!Object.is(walked.checked, item) && copy === undefined) {
      copy = {};
      for (const previous of keys.slice(0, i)) copy[previous] = asIs(Reflect.get(object, previous));
    }
    if (copy !== undefined) copy[key] = walked.checked;
  }
  return { checked: copy ?? asIs(object), json, wire: 1 + varintBytes(payload) + payload };
}

/** Prefixes a nested problem with where it was found. */
function within(path: string, measure: () => Walked): Walked {
  try {
    return measure();
  } catch (error) {
    if (error instanceof JsonProblem) throw new JsonProblem(`${path}: ${error.message}`);
    throw error;
  }
}

/** A value the walk has just checked, unchanged: its type is now known to be JSON. */
function asIs(value: unknown): JsonValue {
  // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- only called on values walk() accepted as they are
  return value as JsonValue;
}

/** Bytes of `text` in UTF-8, and as a JSON string literal (quotes and escapes included). */
function stringSizes(text: string): { json: number; utf8: number } {
  let json = 2;
  let utf8 = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      utf8 += 1;
      json += code === 0x22 || code === 0x5c ? 2 : code >= 0x20 ? 1 : SHORT_ESCAPES.has(code) ? 2 : 6;
    } else if (code < 0x800) {
      utf8 += 2;
      json += 2;
    } else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      utf8 += 4;
      json += 4;
      i += 1;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate: JSON escapes it (\udxxx); UTF-8 encoders write U+FFFD.
      utf8 += 3;
      json += 6;
    } else {
      utf8 += 3;
      json += 3;
    }
  }
  return { json, utf8 };
}

/** \b \t \n \f \r: the control characters JSON writes with two characters. */
const SHORT_ESCAPES: ReadonlySet<number> = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Bytes of `n` as a protobuf varint. */
export function varintBytes(n: number): number {
  let bytes = 1;
  for (let rest = n; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes += 1;
  return bytes;
}
