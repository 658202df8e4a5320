import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

/** The part of a ts-proto message type the server encodes with. */
export interface EncodableType<Message> {
  encode(message: Message, writer?: BinaryWriter): BinaryWriter;
}

/** A message larger than this is encoded on a writer of its own, so that the shared one never keeps a large buffer. */
const SHARED_WRITER_MAX_BYTES = 1 << 20;

/**
 * One writer for the messages the server encodes itself. A new writer
 * starts empty and grows by doubling, copying and zeroing as it goes; this
 * one grows once. Encoding is synchronous and never nests here, so one
 * writer serves every call.
 */
let shared = new BinaryWriter();

/** The bytes `write` writes on the shared writer. */
export function encodeWith(write: (writer: BinaryWriter) => BinaryWriter): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = write(shared).finish();
  } catch (error) {
    // Whatever the failed write left half written must not start the next message.
    shared = new BinaryWriter();
    throw error;
  }
  if (bytes.length > SHARED_WRITER_MAX_BYTES) shared = new BinaryWriter();
  return bytes;
}

/**
 * The serialized bytes of a response its handler built complete (typed as
 * the whole message, as the worker streams write them), for grpc-js:
 * encoded on the shared writer, without the fromPartial copy nice-grpc
 * makes of every response, and handed over as a Buffer over those bytes
 * (grpc-js copies them into its frame).
 */
export function serializeComplete<Message>(type: EncodableType<Message>, message: Message): Buffer {
  const bytes = encodeWith((writer) => type.encode(message, writer));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const ITEMS = Symbol('encodedItems');

/** A message whose repeated field's items are bytes already (framedType's items). */
interface Framed {
  [ITEMS]: Uint8Array;
}

function isFramed(message: unknown): message is Framed {
  return typeof message === 'object' && message !== null && ITEMS in message;
}

/**
 * A message type as the server serves it when one repeated message field
 * (`fieldNumber`) is sent pre-encoded. `items(values, write)` encodes
 * values as items of that field, one after another in one buffer: each
 * its field key, its length and its bytes, exactly what encoding each item
 * would write. Written so, a batch of 200 envelopes costs one buffer, not
 * one each (a buffer of its own cost as much as writing the envelope).
 * `frame(items, rest)` builds a message whose field holds those items
 * (or a run of them, as splitItems cuts them); `type` encodes it: the
 * items as they are, then the rest of the message by the generated
 * encoder. Framed messages are complete, as direct methods answer
 * (service-host.ts).
 */
export function framedType<Message>(
  type: EncodableType<Message>,
  fieldNumber: number,
): {
  type: EncodableType<Message>;
  items<Value>(values: readonly Value[], write: (writer: BinaryWriter, value: Value) => BinaryWriter): Uint8Array;
  frame(items: Uint8Array, rest: Message): Message;
} {
  const key = (fieldNumber << 3) | WireType.LengthDelimited;
  return {
    type: {
      encode(message, writer = new BinaryWriter()) {
        if (isFramed(message)) writer.raw(message[ITEMS]);
        return type.encode(message, writer);
      },
    },
    items: (values, write) =>
      encodeWith((writer) => {
        for (const value of values) write(writer.uint32(key).fork(), value).join();
        return writer;
      }),
    frame: (items, rest) => ({ ...rest, [ITEMS]: items }),
  };
}

/**
 * Items written by framedType's items(), cut into runs of at most
 * `budgetBytes` each, in order (views of the same bytes, not copies). An
 * item larger than the budget on its own makes a run alone.
 */
export function splitItems(items: Uint8Array, budgetBytes: number): Uint8Array[] {
  const runs: Uint8Array[] = [];
  const reader = new BinaryReader(items);
  let start = 0;
  while (reader.pos < reader.len) {
    const itemStart = reader.pos;
    reader.tag();
    const length = reader.uint32();
    reader.pos += length;
    if (itemStart > start && reader.pos - start > budgetBytes) {
      runs.push(items.subarray(start, itemStart));
      start = itemStart;
    }
  }
  if (reader.pos > start) runs.push(items.subarray(start, reader.pos));
  return runs;
}
