import { FrameScanner, type FrameHeader } from '../../support/cutting-proxy';

/** One HTTP/2 frame: its 9-byte header and `length` bytes of payload. */
function frame({ length, type, flags, streamId }: FrameHeader): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, Buffer.alloc(length, 0xff)]);
}

describe('the HTTP/2 frame scanner of the cutting proxy', () => {
  const frames: FrameHeader[] = [
    { length: 6, type: 4, flags: 0, streamId: 0 },
    { length: 0, type: 4, flags: 1, streamId: 0 },
    { length: 14, type: 1, flags: 4, streamId: 1 },
    { length: 70_000, type: 0, flags: 0, streamId: 3 },
    { length: 2, type: 1, flags: 5, streamId: 3 },
  ];
  const bytes = Buffer.concat(frames.map(frame));

  it('finds every frame header in one chunk', () => {
    expect([...new FrameScanner().scan(bytes)]).toEqual(frames);
  });

  it('finds the same headers however the bytes are split', () => {
    for (const size of [1, 5, 9, 10, 4_096]) {
      const scanner = new FrameScanner();
      const found: FrameHeader[] = [];
      for (let at = 0; at < bytes.length; at += size) found.push(...scanner.scan(bytes.subarray(at, at + size)));
      expect(found).toEqual(frames);
    }
  });
});
