import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { concatBytes } from '../support/raw-protobuf';
import type { Draw } from './draw';

/** A top-level field of an encoded message: where it starts and ends (tag included). */
interface FieldSpan {
  fieldNo: number;
  wireType: number;
  start: number;
  /** Where the payload starts (after the tag). */
  payload: number;
  end: number;
}

/** The top-level fields of `bytes`, as far as they parse. */
function fieldSpans(bytes: Uint8Array): FieldSpan[] {
  const reader = new BinaryReader(bytes);
  const spans: FieldSpan[] = [];
  try {
    while (reader.pos < reader.len) {
      const start = reader.pos;
      const [fieldNo, wireType] = reader.tag();
      const payload = reader.pos;
      reader.skip(wireType, fieldNo);
      spans.push({ fieldNo, wireType, start, payload, end: reader.pos });
    }
  } catch {
    // A message that does not parse to its end: its fields so far.
  }
  return spans;
}

function tagBytes(fieldNo: number, wireType: number): Uint8Array {
  return new BinaryWriter().uint32(((fieldNo << 3) | wireType) >>> 0).finish();
}

/** One mutation: its name (for the report) and what it does to valid bytes. */
type Mutation = [name: string, apply: (bytes: Uint8Array, draw: Draw) => Uint8Array];

const MUTATIONS: readonly Mutation[] = [
  [
    'bit flips',
    (bytes, draw) => {
      const copy = Uint8Array.from(bytes);
      for (let i = draw.int(1, 4); i > 0 && copy.length > 0; i--) copy[draw.int(0, copy.length - 1)]! ^= 1 << draw.int(0, 7);
      return copy;
    },
  ],
  ['truncation', (bytes, draw) => bytes.slice(0, draw.int(0, Math.max(0, bytes.length - 1)))],
  [
    'a field duplicated',
    (bytes, draw) => {
      const spans = fieldSpans(bytes);
      if (spans.length === 0) return concatBytes(bytes, bytes);
      const span = draw.pick(spans);
      return concatBytes(bytes, bytes.slice(span.start, span.end));
    },
  ],
  [
    'a wrong wire type',
    (bytes, draw) => {
      const spans = fieldSpans(bytes);
      if (spans.length === 0) return concatBytes(tagBytes(1, WireType.Bit64), bytes);
      const span = draw.pick(spans);
      const wrong = draw.pick([0, 1, 2, 3, 4, 5, 6, 7].filter((t) => t !== span.wireType));
      return concatBytes(bytes.slice(0, span.start), tagBytes(span.fieldNo, wrong), bytes.slice(span.payload));
    },
  ],
  [
    'an unknown field appended',
    (bytes, draw) => {
      const fieldNo = draw.pick([draw.int(1, 40), 536_870_911]);
      const payload = draw.weighted<Uint8Array>([
        [2, () => concatBytes(tagBytes(fieldNo, WireType.Varint), new BinaryWriter().int64(BigInt(draw.int(0, 2 ** 31))).finish())],
        [1, () => concatBytes(tagBytes(fieldNo, WireType.Bit64), draw.bytes(8))],
        [1, () => concatBytes(tagBytes(fieldNo, WireType.Bit32), draw.bytes(4))],
        [2, () => concatBytes(tagBytes(fieldNo, WireType.LengthDelimited), new BinaryWriter().bytes(draw.bytes(draw.int(0, 20))).finish())],
      ]);
      return concatBytes(bytes, payload);
    },
  ],
  [
    'a huge varint',
    (bytes, draw) => {
      const fieldNo = draw.pick([...fieldSpans(bytes).map((s) => s.fieldNo), 1, 2]);
      return concatBytes(
        bytes,
        tagBytes(fieldNo, draw.pick([WireType.Varint, WireType.LengthDelimited])),
        draw.pick([
          // 2^64 - 1, the longest valid varint; one byte longer than any; a length far beyond the message.
          Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
          Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
          Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x07),
        ]),
      );
    },
  ],
  ['a group never closed', (bytes, draw) => concatBytes(bytes, tagBytes(draw.int(1, 40), WireType.StartGroup), Uint8Array.of(0x08, 0x01))],
  [
    'garbage spliced in',
    (bytes, draw) => {
      const at = draw.int(0, bytes.length);
      return concatBytes(bytes.slice(0, at), draw.bytes(draw.int(1, 12)), bytes.slice(at));
    },
  ],
  ['random bytes', (_bytes, draw) => draw.bytes(draw.int(0, 64))],
];

/** `bytes` mutated one way or another, and how. */
export function mutate(bytes: Uint8Array, draw: Draw): { bytes: Uint8Array; how: string } {
  const [how, apply] = draw.pick(MUTATIONS);
  return { bytes: apply(bytes, draw), how };
}
