import { OjsError } from '../../domain/errors';
import type { JsonObject, JsonValue } from '../../domain/json';

/**
 * Reads values whose shape TypeScript cannot know: script replies (Lua
 * strings arrive as strings, numbers as integers, tables as arrays, nil and
 * false as null) and the JSON this store wrote into Redis. Each reader
 * checks the shape and returns a typed value, so nothing else casts; a
 * value of another shape throws a `backend_error` OjsError, since only a
 * bug (or data written by someone else) can produce one. `what` names the
 * value in that error.
 */

export function unexpectedReply(what: string, value: unknown): never {
  const shown = JSON.stringify(value) ?? String(value);
  const text = shown.length > 80 ? `${shown.slice(0, 80)}...` : shown;
  throw new OjsError('backend_error', `unexpected data from Redis: ${what} is ${text}`);
}

export function readArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) unexpectedReply(what, value);
  // Array.isArray narrows to any[]; the elements are of unknown shape.
  const items: unknown[] = value;
  return items;
}

export function readString(value: unknown, what: string): string {
  if (typeof value !== 'string') unexpectedReply(what, value);
  return value;
}

export function readNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) unexpectedReply(what, value);
  return value;
}

export function readBoolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') unexpectedReply(what, value);
  return value;
}

/** A Redis integer reply, or an integer a script returned as text (lib/arguments.lua int()). */
export function readInteger(value: unknown, what: string): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) unexpectedReply(what, value);
  return n;
}

/** An integer a script returned as text, or '' for none. */
export function readOptionalInteger(value: unknown, what: string): number | undefined {
  return value === '' ? undefined : readInteger(value, what);
}

/** A number written as text into a hash field ('' or absent for none). */
export function readOptionalNumberText(value: string | undefined, what: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) unexpectedReply(what, value);
  return n;
}

export function readStrings(value: unknown, what: string): string[] {
  return readArray(value, what).map((item, i) => readString(item, `${what}[${i}]`));
}

/** One of `options` (a list of string literals). */
export function readOneOf<T extends string>(value: unknown, options: readonly T[], what: string): T {
  const text = readString(value, what);
  const found = options.find((option) => option === text);
  if (found === undefined) unexpectedReply(what, value);
  return found;
}

/** A key of `record` (a table keyed by a string union, such as NEXT_WORKER_STATES). */
export function readKeyOf<T extends string>(value: unknown, record: Readonly<Record<T, unknown>>, what: string): T {
  const text = readString(value, what);
  if (!isKeyOf(record, text)) unexpectedReply(what, value);
  return text;
}

function isKeyOf<T extends string>(record: Readonly<Record<T, unknown>>, key: string): key is T {
  return Object.hasOwn(record, key);
}

/** A hash as HGETALL returns it from a script (field, value, field, value...). */
export function readFlatHash(value: unknown, what: string): Record<string, string> {
  const flat = readStrings(value, what);
  if (flat.length % 2 !== 0) unexpectedReply(what, value);
  const hash: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

/** The first element of a reply (its status) and the rest. */
export function readStatus(value: unknown, what: string): { status: string; rest: unknown[] } {
  const [status, ...rest] = readArray(value, what);
  return { status: readString(status, `${what} status`), rest };
}

/** JSON text this store wrote. */
export function readJson(text: string, what: string): JsonValue {
  try {
    // What JSON.parse returns is JSON-native by definition: walking it to prove so to TypeScript cost every read a pass.
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- see above
    return JSON.parse(text) as JsonValue;
  } catch {
    return unexpectedReply(what, text);
  }
}

export function readJsonObject(value: JsonValue | undefined, what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) unexpectedReply(what, value);
  return value;
}

export function readJsonArray(value: JsonValue | undefined, what: string): JsonValue[] {
  if (!Array.isArray(value)) unexpectedReply(what, value);
  return value;
}
