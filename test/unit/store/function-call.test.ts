import { Command } from 'ioredis';
import { encodeRequest, FunctionCall } from '../../../src/store/redis/function-call';

/** The request ioredis itself writes for FCALL with these arguments, as bytes. */
function ioredisRequest(args: (string | number)[]): Buffer {
  const command = new Command('fcall', args);
  command.stringifyArguments();
  return Buffer.from(command.toWritable(undefined as never) as string);
}

describe('a function call', () => {
  it('writes the request ioredis would write, byte for byte', () => {
    const args = ['ojs_ack_0123', 2, '{ojs}:job:', '{ojs}:ready:', '100000', 1_732_800_000_000, '', 'x'.repeat(300)];
    expect(Buffer.from(encodeRequest(args.slice(0, 4), args.slice(4)))).toEqual(ioredisRequest(args));
  });

  it('counts the bytes, not the characters, of text beyond ASCII', () => {
    const args = ['f', 0, '{"args":["é","日本","🙂"]}', 'plain'];
    const request = Buffer.from(encodeRequest(args));
    expect(request).toEqual(ioredisRequest(args));
    expect(request.toString()).toContain(`$${Buffer.byteLength('{"args":["é","日本","🙂"]}')}\r\n`);
  });

  it('is routed by its first key, so that a cluster sends it to the slot of the deployment', () => {
    const call = new FunctionCall(['f', 1, '{ojs}:job:'], [], '{ojs}:job:');
    expect(call.getKeys()).toEqual(['{ojs}:job:']);
    expect(call.getSlot()).toBe(new FunctionCall(['g', 0], [], '{ojs}:other').getSlot());
  });
});
