import * as fc from 'fast-check';
import { Command } from 'ioredis';
import { encodeRequest, FunctionCall } from '../../../src/store/redis/function-call';
import { propertyParameters } from '../../support/property';

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

  it('measures a long argument beyond ASCII whose first bytes fill its length in characters exactly', () => {
    // 300 characters: é and 298 letters are 300 bytes, and 日 does not fit after them.
    const text = `é${'a'.repeat(298)}日`;
    const args = ['f', 0, text];
    expect(Buffer.from(encodeRequest(args))).toEqual(ioredisRequest(args));
  });

  it('writes the request ioredis would write for any text and whole numbers', () => {
    const arg = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 }), fc.nat());
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 30 }), (args) => {
        expect(Buffer.from(encodeRequest(args.slice(0, 1), args.slice(1)))).toEqual(ioredisRequest(args));
      }),
      propertyParameters(),
    );
  });

  it('is routed by its first key, so that a cluster sends it to the slot of the deployment', () => {
    const call = new FunctionCall(['f', 1, '{ojs}:job:'], [], '{ojs}:job:');
    expect(call.getKeys()).toEqual(['{ojs}:job:']);
    expect(call.getSlot()).toBe(new FunctionCall(['g', 0], [], '{ojs}:other').getSlot());
  });
});
