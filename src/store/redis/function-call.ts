import { isAscii } from 'node:buffer';
import { Command } from 'ioredis';
import type { ScriptArg } from './script';

/**
 * An FCALL as ioredis sends it, with its request written here: a script
 * call carries thousands of arguments (an enqueue of 200 jobs about
 * 7,000), and ioredis's own Command copies them, turns each into text
 * and measures each one's UTF-8 length before it writes them, which cost
 * the server more than anything it did for those jobs. Here the request
 * is written into one buffer sized beforehand, every length taken as the
 * string's length, and written again measured byte by byte only when an
 * argument holds a character beyond ASCII (a job's args may). ioredis's
 * own scripts override toWritable the same way (its Script class);
 * replies, timeouts and reconnection are ioredis's as for any command.
 */
export class FunctionCall extends Command {
  private readonly request: Buffer;

  /**
   * @param head What follows FCALL first: the function's name, the key count, the keys, the settings.
   * @param args The function's own arguments (not copied into one list with `head`: they are thousands).
   * @param firstKey The key a cluster routes the call by (every key of a call shares its slot).
   */
  constructor(
    head: readonly ScriptArg[],
    args: readonly ScriptArg[],
    private readonly firstKey: string,
  ) {
    super('fcall', [], { replyEncoding: 'utf8' });
    this.request = encodeRequest(head, args);
  }

  override toWritable(): Buffer {
    return this.request;
  }

  override getKeys(): string[] {
    return [this.firstKey];
  }
}

/** The RESP request of FCALL with `head`, then `args`. */
export function encodeRequest(head: readonly ScriptArg[], args: readonly ScriptArg[] = []): Buffer {
  // Measured, the writer always writes.
  return writeRequest(head, args, false) ?? writeRequest(head, args, true)!;
}

const CR = 13;
const LF = 10;
const DOLLAR = 36;
const STAR = 42;
/** The command's name, after the argument count. */
const FCALL = '$5\r\nfcall\r\n';
/** Strings shorter than this are copied character by character: Buffer#write costs more per call than that. */
const SHORT_TEXT = 64;
/** The arguments' texts, between the two passes of writeRequest (kept: a call has thousands, and calls never overlap). */
let texts: string[] = [];

/**
 * The request written into one buffer sized beforehand. It avoids what a
 * string built by concatenation cost: a string per argument, a rope of
 * thousands, then its flattening and its encoding as the socket writes
 * it, all garbage for the collector. Unless `isMeasured`, every argument
 * is taken for ASCII (its length in bytes is the string's, which spares
 * measuring thousands of them), and the result is undefined when one is
 * not; measured, each length is its UTF-8 bytes.
 */
function writeRequest(head: readonly ScriptArg[], args: readonly ScriptArg[], isMeasured: boolean): Buffer | undefined {
  const count = head.length + args.length;
  if (texts.length < count) texts = Array.from({ length: count }, () => '');
  let size = 1 + digitCount(count + 1) + 2 + FCALL.length;
  // Indexed loops: for...of over thousands of arguments allocated an iterator result for each.
  for (let k = 0; k < count; k++) {
    const arg = k < head.length ? head[k]! : args[k - head.length]!;
    const text = typeof arg === 'string' ? arg : String(arg);
    texts[k] = text;
    const length = isMeasured ? Buffer.byteLength(text) : text.length;
    size += 1 + digitCount(length) + 2 + length + 2;
  }
  try {
    const request = Buffer.allocUnsafe(size);
    request[0] = STAR;
    let at = writeDigits(request, 1, count + 1);
    request[at++] = CR;
    request[at++] = LF;
    at += request.write(FCALL, at, 'latin1');
    for (let i = 0; i < count; i++) {
      const text = texts[i]!;
      const length = isMeasured ? Buffer.byteLength(text) : text.length;
      request[at++] = DOLLAR;
      at = writeDigits(request, at, length);
      request[at++] = CR;
      request[at++] = LF;
      if (!isMeasured && length < SHORT_TEXT) {
        for (let j = 0; j < length; j++) {
          const code = text.charCodeAt(j);
          if (code > 0x7f) return undefined;
          request[at++] = code;
        }
      } else {
        // Taken for ASCII: fewer bytes than characters, or (checked once at the end) a byte beyond ASCII, say it is not.
        if (request.write(text, at, length, 'utf8') !== length) return undefined;
        at += length;
      }
      request[at++] = CR;
      request[at++] = LF;
    }
    // A string beyond ASCII can fill its length exactly with a prefix that holds a byte above 0x7f.
    return isMeasured || isAscii(request) ? request : undefined;
  } finally {
    texts.fill('', 0, count);
  }
}

/** How many decimal digits the whole number `n` has (lengths and counts: below 10^15). */
function digitCount(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1_000) return 3;
  if (n < 10_000) return 4;
  if (n < 100_000) return 5;
  let count = 6;
  for (let rest = Math.floor(n / 1_000_000); rest >= 1; rest = Math.floor(rest / 10)) count += 1;
  return count;
}

/** Writes the decimal digits of the whole number `n` at `at`; returns where they end. */
function writeDigits(request: Buffer, at: number, n: number): number {
  const end = at + digitCount(n);
  let rest = n;
  for (let i = end - 1; i >= at; i--) {
    request[i] = 48 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return end;
}
