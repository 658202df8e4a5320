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

  override toWritable(): string {
    return this.request;
  }

  override getKeys(): string[] {
    return [this.firstKey];
  }
}

/** The RESP request of FCALL with `head`, then `args`. */
export function encodeRequest(head: readonly ScriptArg[], args: readonly ScriptArg[] = []): string {
  const ascii = build(head, args, (text) => text.length);
  return NON_ASCII.test(ascii) ? build(head, args, (text) => Buffer.byteLength(text)) : ascii;
}

function build(head: readonly ScriptArg[], args: readonly ScriptArg[], byteLength: (text: string) => number): string {
  let request = `*${head.length + args.length + 1}\r\n$5\r\nfcall\r\n`;
  for (const list of [head, args]) {
    for (const arg of list) {
      const text = typeof arg === 'string' ? arg : String(arg);
      request += `$${byteLength(text)}\r\n${text}\r\n`;
    }
  }
  return request;
}
