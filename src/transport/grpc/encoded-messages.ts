import { BinaryWriter } from '@bufbuild/protobuf/wire';

/** The parts of a ts-proto message type the server encodes with. */
export interface EncodableType<Message> {
  encode(message: Message, writer?: BinaryWriter): BinaryWriter;
  fromPartial(object: never): Message;
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
export function serializeComplete<Message>(type: Pick<EncodableType<Message>, 'encode'>, message: Message): Buffer {
  const bytes = encodeWith((writer) => type.encode(message, writer));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const PARTS = Symbol('encodedParts');

/** A message whose repeated field's items are bytes already, encoded when they were measured. */
interface Framed {
  [PARTS]: readonly Uint8Array[];
}

function isFramed(message: unknown): message is Framed {
  return typeof message === 'object' && message !== null && PARTS in message;
}

/**
 * A message type as the server serves it when one repeated message field
 * (`fieldNumber`) is sent pre-encoded: `frame(parts, rest)` builds a
 * message whose items are those bytes (written as they are: field key,
 * length, bytes, exactly what encoding each item would write), the rest of
 * the message encoded by the generated encoder. Framed messages skip
 * fromPartial, which nice-grpc applies to every response: they are
 * complete.
 */
export function framedType<Message>(
  type: EncodableType<Message>,
  fieldNumber: number,
): { type: EncodableType<Message>; frame(parts: readonly Uint8Array[], rest: Message): Message } {
  const key = (fieldNumber << 3) | 2;
  return {
    type: {
      ...type,
      encode(message, writer = new BinaryWriter()) {
        if (isFramed(message)) for (const bytes of message[PARTS]) writer.uint32(key).bytes(bytes);
        return type.encode(message, writer);
      },
      fromPartial(object) {
        return isFramed(object) ? object : type.fromPartial(object);
      },
    },
    frame: (parts, rest) => ({ ...rest, [PARTS]: parts }),
  };
}
