import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder';
import * as fc from 'fast-check';
import { releaseDecodedMessages } from '../../../src/transport/grpc/decoder-release';
import { propertyParameters } from '../../support/property';

/** A message as gRPC frames it: a compression flag, its length (4 bytes, big-endian), its bytes. */
function framed(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** `bytes` cut at `cuts` (positions, any order), each piece on an ArrayBuffer of its own, as the network hands them over. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const ends = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].toSorted((a, b) => a - b);
  ends.push(bytes.length);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const end of ends) {
    if (end === start) continue;
    const chunk = Buffer.alloc(end - start);
    bytes.copy(chunk, 0, start, end);
    chunks.push(chunk);
    start = end;
  }
  return chunks;
}

/** The fields a decoder could keep a chunk's memory by (decoder-release.ts DecoderFields). */
function keptBuffers(decoder: StreamDecoder): Buffer[] {
  const fields = decoder as unknown as { readCompressFlag: Buffer; readPartialMessage: Buffer[] };
  return [fields.readCompressFlag, ...fields.readPartialMessage];
}

const messages = fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 1, maxLength: 6 });
const cuts = fc.array(fc.nat(), { maxLength: 12 });

describe('releaseDecodedMessages', () => {
  let isInstalled = false;
  beforeAll(() => {
    isInstalled = releaseDecodedMessages();
  });

  it('installs on the grpc-js the server runs on (one whose decoder changed shape fails here)', () => {
    expect(isInstalled).toBe(true);
  });

  it('keeps no slice of any chunk once the messages they carried are whole', () => {
    fc.assert(
      fc.property(messages, cuts, (bodies, at) => {
        const decoder = new StreamDecoder(-1);
        const chunks = chunked(Buffer.concat(bodies.map(framed)), at);
        for (const chunk of chunks) decoder.write(chunk);
        // The last chunk ended the last message: the decoder refers to none of the chunks' memory.
        const memory = new Set(chunks.map((chunk) => chunk.buffer));
        for (const kept of keptBuffers(decoder)) expect(memory.has(kept.buffer)).toBe(false);
      }),
      propertyParameters(),
    );
  });

  it('still decodes every message whole and in order, however the chunks cut them', () => {
    fc.assert(
      fc.property(messages, cuts, (bodies, at) => {
        const decoder = new StreamDecoder(-1);
        const decoded = chunked(Buffer.concat(bodies.map(framed)), at).flatMap((chunk) => decoder.write(chunk));
        expect(decoded.map((frame) => Buffer.from(frame))).toEqual(bodies.map(framed));
      }),
      propertyParameters(),
    );
  });

  it('is installed once: a second call changes nothing', () => {
    const installed = Object.getOwnPropertyDescriptor(StreamDecoder.prototype, 'write');
    expect(releaseDecodedMessages()).toBe(true);
    expect(Object.getOwnPropertyDescriptor(StreamDecoder.prototype, 'write')).toEqual(installed);
  });
});
