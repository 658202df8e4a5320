import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder';

/**
 * What grpc-js's StreamDecoder (a call's reader of length-prefixed
 * messages) keeps between messages: it is not part of grpc-js's published
 * API, so the fields are declared here as grpc-js 1.14 defines them.
 */
interface DecoderFields {
  /** 0 (NO_DATA) between messages. */
  readState: number;
  /** The message's first byte: a slice of the chunk it came in. */
  readCompressFlag: Buffer;
  /** The message's bytes as slices of the chunks they came in (grpc-js replaces the array before it adds to it). */
  readPartialMessage: readonly Buffer[];
}

const NO_DATA = 0;
// Frozen: should a grpc-js ever add to the array it did not make, it throws rather than mix two calls' bytes.
const NO_SLICES: readonly Buffer[] = Object.freeze([]);
const NO_FLAG = Buffer.alloc(1);

let isInstalled = false;

/** Whether `decoder` keeps the fields this was written for (a grpc-js whose StreamDecoder changed may not). */
function hasDecoderFields(decoder: object): decoder is DecoderFields {
  return (
    'readState' in decoder &&
    typeof decoder.readState === 'number' &&
    'readCompressFlag' in decoder &&
    Buffer.isBuffer(decoder.readCompressFlag) &&
    'readPartialMessage' in decoder &&
    Array.isArray(decoder.readPartialMessage)
  );
}

/** Between messages, drops what the decoder kept of the last one. */
function releaseWholeMessage(decoder: DecoderFields): void {
  if (decoder.readState === NO_DATA) {
    decoder.readCompressFlag = NO_FLAG;
    decoder.readPartialMessage = NO_SLICES;
  }
}

/**
 * Makes every grpc-js call of the process let go of a message's bytes once
 * the message is whole. grpc-js keeps slices of the last message's chunks
 * until the next message starts: on a Beat stream that is the next beat,
 * 5 s later, so every beat of every worker left the collector old
 * objects (promoted by the young generation's collections meanwhile), and
 * at 10,000 workers a quarter of the time spent in young-generation pauses
 * went to them. Between messages (state NO_DATA) grpc-js sets both fields
 * afresh before it reads them again, so shared empty values are safe.
 * Returns false, changing nothing, when the decoder is not the one this was
 * written for (a grpc-js whose StreamDecoder changed shape).
 */
export function releaseDecodedMessages(): boolean {
  if (isInstalled) return true;
  const probe: object = new StreamDecoder(-1);
  if (!hasDecoderFields(probe) || probe.readState !== NO_DATA) return false;
  // oxlint-disable-next-line typescript/unbound-method -- called below with the decoder as `this`
  const write = StreamDecoder.prototype.write;
  StreamDecoder.prototype.write = function releasingWrite(this: StreamDecoder, data: Buffer): Buffer[] {
    const messages = write.call(this, data);
    // Every received chunk comes here: the shape was checked once, on the probe, not again for each.
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- every StreamDecoder has the probe's fields
    releaseWholeMessage(this as unknown as DecoderFields);
    return messages;
  };
  isInstalled = true;
  return true;
}
