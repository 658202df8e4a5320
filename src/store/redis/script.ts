import { OjsError } from '../../domain/errors';

/** One argument of a script (ARGV): Redis receives every argument as a string. */
export type ScriptArg = string | number;

/**
 * What every script receives before its own arguments (lib/arguments.lua reads
 * them as ARGV[1]...): the settings of the deployment that scripts apply as
 * they write, such as how many facts the event log keeps. Encoders see them
 * too, so that they leave out what a script would drop.
 */
export interface ScriptSettings {
  /** The event log's length: the facts it keeps (0: no log). */
  eventLogLength: number;
}

/**
 * A Lua script of lua/, declared once: its file name, how typed params
 * become its ARGV, and how its reply becomes a typed result. The store calls
 * scripts only through these declarations, so argument positions are known
 * in one place per script (next to the header of its .lua file that names
 * them) and replies are read only by `decode`, through reply.ts.
 *
 * Every script receives the same KEYS (keys.ts scriptKeys), named by
 * lib/ojs.lua: the helpers every script shares need them all. Likewise,
 * the runner puts the deployment's settings (script-runner.ts
 * ScriptSettings) before the arguments `encode` returns, and the scripts'
 * headers number their own arguments from 1.
 */
export interface RedisScript<P, R> {
  /** The file lua/<name>.lua. */
  readonly name: string;
  /**
   * The script only reads: its function is registered with the `no-writes`
   * flag (function-library.ts), so Redis refuses any write it attempts and
   * runs it even when full (maxmemory), as it ran the script before functions.
   */
  readonly isReadOnly?: true;
  /** ARGV, in the order the script's header lists. */
  encode(params: P, settings: ScriptSettings): ScriptArg[];
  /** The result (or the OjsError a refusal stands for) of the script's reply. */
  decode(reply: unknown, params: P): R;
}

/** A declaration whose types are inferred from its functions. */
export function declareScript<P, R>(script: RedisScript<P, R>): RedisScript<P, R> {
  return script;
}

/**
 * Encoders of single arguments. They refuse (an OjsError `backend_error`:
 * the domain should have refused the value earlier) what must never reach a
 * script, since Lua has no rollback and scores or counters built from NaN
 * or Infinity would corrupt the data: the scripts check again.
 */
export const arg = {
  /** A whole number (a time, a duration, a count). */
  int(value: number, what: string): number {
    if (!Number.isSafeInteger(value)) refuseArg(what, value);
    return value;
  },
  /** A finite number. */
  number(value: number, what: string): number {
    if (!Number.isFinite(value)) refuseArg(what, value);
    return value;
  },
  /** A whole number, or '' for none. */
  optionalInt(value: number | undefined, what: string): ScriptArg {
    return value === undefined ? '' : arg.int(value, what);
  },
  /** A non-empty string: an id, a name, a token. */
  id(value: string, what: string): string {
    if (typeof value !== 'string' || value === '') refuseArg(what, value);
    return value;
  },
  /** Any string (possibly empty). */
  text(value: string, what: string): string {
    if (typeof value !== 'string') refuseArg(what, value);
    return value;
  },
  flag(value: boolean): number {
    return value ? 1 : 0;
  },
  /** A value as JSON, or '' for undefined. */
  json(value: unknown): string {
    return value === undefined ? '' : JSON.stringify(value);
  },
};

function refuseArg(what: string, value: unknown): never {
  throw new OjsError('backend_error', `refusing to pass ${what} = ${String(value)} to a Redis script`);
}

/**
 * A batch of items as scripts read it (lib/arguments.lua argBatch): the item
 * count, the stride (fields per item), then each item's fields in the order
 * `fields` lists them. `fields` is the one list of a batch's fields: the
 * script checks the stride and that the items end its arguments. Appends
 * to `args` one value at a time: batches are large, and spreading them into
 * a call would overflow the stack.
 */
export function appendBatch<F extends string, T>(
  args: ScriptArg[],
  fields: readonly F[],
  items: readonly T[],
  encodeItem: (item: T) => Readonly<Record<F, ScriptArg>>,
): ScriptArg[] {
  args.push(items.length, fields.length);
  for (const item of items) {
    const encoded = encodeItem(item);
    for (const field of fields) args.push(encoded[field]);
  }
  return args;
}
