import { BinaryWriter } from '@bufbuild/protobuf/wire';

/**
 * Protobuf bytes the generated encoders cannot produce: timestamps and
 * durations whose seconds no Date or safe integer holds, strings that are
 * not valid UTF-8, and fields appended to an encoded message. A decoder
 * reads fields in any order and lets a later scalar win, so appending a
 * field to an encoded message sets it.
 */

/** A google.protobuf.Timestamp or Duration as it travels: int64 seconds (any, as a bigint) and int32 nanos. */
export interface RawSecondsNanos {
  seconds: bigint;
  nanos: number;
}

/** Wire types (protobuf encoding: VARINT 0, I64 1, LEN 2, I32 5). */
export const WIRE = { varint: 0, i64: 1, len: 2, i32: 5 } as const;

/** The bytes of a Timestamp or Duration message. */
export function secondsNanosBytes({ seconds, nanos }: RawSecondsNanos): Uint8Array {
  const writer = new BinaryWriter();
  if (seconds !== 0n) writer.uint32(8).int64(seconds);
  if (nanos !== 0) writer.uint32(16).int32(nanos);
  return writer.finish();
}

/** A length-delimited field (a message, string or bytes) with `payload` as it is. */
export function lengthDelimited(field: number, payload: Uint8Array): Uint8Array {
  return new BinaryWriter()
    .uint32((field << 3) | WIRE.len)
    .bytes(payload)
    .finish();
}

/** A varint field holding `value` (int64 range, as a bigint). */
export function varintField(field: number, value: bigint): Uint8Array {
  return new BinaryWriter()
    .uint32((field << 3) | WIRE.varint)
    .int64(value)
    .finish();
}

/** The bytes of `parts` one after the other. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** `message` with the Timestamp or Duration field `field` appended, holding `value`. */
export function withSecondsNanos(message: Uint8Array, field: number, value: RawSecondsNanos): Uint8Array {
  return concatBytes(message, lengthDelimited(field, secondsNanosBytes(value)));
}

/** An EnqueueRequest from encoded jobs (field 1), staged as pending (field 2) or not. */
export function enqueueRequestBytes(jobs: readonly Uint8Array[], pending = false): Uint8Array {
  const writer = new BinaryWriter();
  for (const job of jobs) writer.uint32((1 << 3) | WIRE.len).bytes(job);
  if (pending) writer.uint32((2 << 3) | WIRE.varint).bool(true);
  return writer.finish();
}

/** Bytes that are not UTF-8: a lone continuation byte and an overlong encoding between ASCII letters. */
export function invalidUtf8(prefix = 'w'): Uint8Array {
  return concatBytes(Buffer.from(prefix), Uint8Array.of(0x80, 0xc0, 0xaf), Buffer.from('x'));
}

/**
 * A google.protobuf.Value of `levels` lists, one inside the other, around
 * the number 1: deeper than any decoder limit when `levels` is large.
 */
export function nestedListValueBytes(levels: number): Uint8Array {
  let value: Uint8Array = new BinaryWriter()
    .uint32((2 << 3) | WIRE.i64)
    .double(1)
    .finish();
  for (let i = 0; i < levels; i++) value = lengthDelimited(6, lengthDelimited(1, value));
  return value;
}

/** A google.protobuf.Struct of `levels` structs, one inside the other ({"a": {"a": ... 1}}). */
export function nestedStructBytes(levels: number): Uint8Array {
  let struct = structEntryBytes(
    'a',
    new BinaryWriter()
      .uint32((2 << 3) | WIRE.i64)
      .double(1)
      .finish(),
  );
  for (let i = 1; i < levels; i++) struct = structEntryBytes('a', lengthDelimited(5, struct));
  return struct;
}

/** One field of a Struct: a map entry of `key` and the Value bytes `value`. */
function structEntryBytes(key: string, value: Uint8Array): Uint8Array {
  return lengthDelimited(1, concatBytes(lengthDelimited(1, Buffer.from(key)), lengthDelimited(2, value)));
}
