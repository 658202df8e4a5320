import { Command } from 'ioredis';
import type { ScriptArg } from './script';

/** Bytes that are never part of a one-byte-per-character UTF-8 string. */
// oxlint-disable-next-line eslint/no-control-regex -- the test is for anything outside ASCII
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * An FCALL as ioredis sends it, with its request written here: a script
 * call carries thousands of arguments (an enqueue of 200 jobs about
 * 7,000), and ioredis's own Command copies them, turns each into text
 * and measures each one's UTF-8 length before it writes them, which cost
 * the server more than anything it did for those jobs. Here the request
 * is one string built in one pass, every length taken as the string's
 * length, and measured again only when the request holds a character
 * beyond ASCII (a job's args may). ioredis's own scripts override
 * toWritable the same way (its Script class); replies, timeouts and
 * reconnection are ioredis's as for any command.
 */
export class FunctionCall extends Command {
  private readonly request: string;

  /**
   * @param args Everything after FCALL: the function's name, the key count, the keys, the arguments.
   * @param firstKey The key a cluster routes the call by (every key of a call shares its slot).
   */
  constructor(
    args: readonly ScriptArg[],
    private readonly firstKey: string,
  ) {
    super('fcall', [], { replyEncoding: 'utf8' });
    this.request = encodeRequest(args);
  }

  override toWritable(): string {
    return this.request;
  }

  override getKeys(): string[] {
    return [this.firstKey];
  }
}

/** The RESP request of FCALL with `args`. */
export function encodeRequest(args: readonly ScriptArg[]): string {
  const ascii = build(args, (text) => text.length);
  return NON_ASCII.test(ascii) ? build(args, (text) => Buffer.byteLength(text)) : ascii;
}

function build(args: readonly ScriptArg[], byteLength: (text: string) => number): string {
  let request = `*${args.length + 1}\r\n$5\r\nfcall\r\n`;
  for (const arg of args) {
    const text = typeof arg === 'string' ? arg : String(arg);
    request += `$${byteLength(text)}\r\n${text}\r\n`;
  }
  return request;
}
