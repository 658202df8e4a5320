import { ScalarType, type DescEnum, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { Draw } from './draw';

/** Strings for a field, by its proto name: live ids for id fields, hostile text for the rest. */
export type StringsFor = (fieldName: string) => string;

const INT32 = [0, 1, -1, 2, 7, 100, 1_000, -1_000, 1_001, 10_000, 10_001, 2 ** 31 - 1, -(2 ** 31)];
const UINT32 = [0, 1, 2, 1_000, 2 ** 32 - 1];
const INT64 = [0n, 1n, -1n, 5n, 1_000n, 2n ** 53n - 1n, 2n ** 53n, 10n ** 13n, 253_402_300_800n, 2n ** 63n - 1n, -(2n ** 63n)];
const UINT64 = [0n, 1n, 2n ** 53n, 2n ** 64n - 1n];
const DOUBLES = [0, -0, 0.5, 1, -1, 100, Number.NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53 + 2];
/** Well-known types nest themselves: they may go deeper than other messages. */
const RECURSIVE = new Set(['google.protobuf.Value', 'google.protobuf.ListValue', 'google.protobuf.Struct']);
const MAX_DEPTH = 6;

/**
 * Encodes random messages of any type in a descriptor set: each field
 * absent or set (repeated ones several times, packed or not), scalars from
 * boundary values, enums from their values and beyond, nested messages down
 * to a bounded depth. Requests of an RPC added to the contract are
 * generated with no change here. The bytes are written field by field, so
 * values no generated encoder would accept (int64 seconds of 10^13 or
 * 2^63 - 1 in a Timestamp) are written as they are.
 */
export class MessageGenerator {
  constructor(
    private readonly draw: Draw,
    private readonly stringsFor: StringsFor,
  ) {}

  message(type: DescMessage, depth = 0): Uint8Array {
    const writer = new BinaryWriter();
    const skip = depth === 0 ? 0.3 : 0.5;
    for (const member of type.members) {
      if (member.kind === 'oneof') {
        if (this.draw.chance(0.7)) this.field(writer, this.draw.pick(member.fields), depth);
      } else if (!this.draw.chance(skip)) {
        this.field(writer, member, depth);
      }
    }
    return writer.finish();
  }

  private field(writer: BinaryWriter, field: DescField, depth: number): void {
    switch (field.fieldKind) {
      case 'scalar':
        return this.scalar(writer.tag(field.number, wireTypeOf(field.scalar)), field.scalar, field.name);
      case 'enum':
        return void writer.tag(field.number, WireType.Varint).int32(this.enumValue(field.enum));
      case 'message':
        if (this.isTooDeep(field.message, depth)) return;
        return void writer.tag(field.number, WireType.LengthDelimited).bytes(this.message(field.message, depth + 1));
      case 'list':
        return this.list(writer, field, depth);
      case 'map':
        for (let i = this.count(); i > 0; i--) {
          const entry = new BinaryWriter();
          this.scalar(entry.tag(1, wireTypeOf(field.mapKey)), field.mapKey, field.name);
          if (field.mapKind === 'message' && !this.isTooDeep(field.message, depth)) {
            entry.tag(2, WireType.LengthDelimited).bytes(this.message(field.message, depth + 1));
          }
          writer.tag(field.number, WireType.LengthDelimited).bytes(entry.finish());
        }
        return;
    }
  }

  private list(writer: BinaryWriter, field: DescField & { fieldKind: 'list' }, depth: number): void {
    const count = this.count();
    if (field.listKind === 'message') {
      if (this.isTooDeep(field.message, depth)) return;
      for (let i = 0; i < count; i++) writer.tag(field.number, WireType.LengthDelimited).bytes(this.message(field.message, depth + 1));
      return;
    }
    const scalar = field.listKind === 'scalar' ? field.scalar : ScalarType.INT32;
    const isPackable = scalar !== ScalarType.STRING && scalar !== ScalarType.BYTES;
    // Decoders accept repeated numbers packed or one by one: send both.
    if (isPackable && this.draw.chance(0.5)) {
      const packed = new BinaryWriter();
      for (let i = 0; i < count; i++) {
        if (field.listKind === 'enum') packed.int32(this.enumValue(field.enum));
        else this.scalar(packed, scalar, field.name);
      }
      writer.tag(field.number, WireType.LengthDelimited).bytes(packed.finish());
      return;
    }
    for (let i = 0; i < count; i++) {
      writer.tag(field.number, wireTypeOf(scalar));
      if (field.listKind === 'enum') writer.int32(this.enumValue(field.enum));
      else this.scalar(writer, scalar, field.name);
    }
  }

  /** How many items a repeated field gets: mostly a few, now and then many. */
  private count(): number {
    return this.draw.weighted([
      [6, () => this.draw.int(0, 3)],
      [1, () => this.draw.int(4, 40)],
    ]);
  }

  private isTooDeep(type: DescMessage, depth: number): boolean {
    return depth >= (RECURSIVE.has(type.typeName) ? MAX_DEPTH : 4);
  }

  private enumValue(type: DescEnum): number {
    return this.draw.chance(0.85) ? this.draw.pick(type.values).number : this.draw.pick([-1, 99, 2 ** 31 - 1]);
  }

  /** Writes one value of `scalar` (the tag, if any, is written already). */
  private scalar(writer: BinaryWriter, scalar: ScalarType, fieldName: string): void {
    const { draw } = this;
    switch (scalar) {
      case ScalarType.STRING:
        return void writer.string(this.stringsFor(fieldName));
      case ScalarType.BYTES:
        return void writer.bytes(draw.bytes(draw.int(0, 16)));
      case ScalarType.BOOL:
        return void writer.bool(draw.chance(0.5));
      case ScalarType.DOUBLE:
        return void writer.double(draw.chance(0.7) ? draw.pick(DOUBLES) : (draw.int(-1e6, 1e6) / 7) * 10 ** draw.int(-5, 5));
      case ScalarType.FLOAT:
        return void writer.float(draw.int(-1000, 1000) / 8);
      case ScalarType.INT32:
      case ScalarType.SINT32:
      case ScalarType.SFIXED32: {
        const value = draw.chance(0.7) ? draw.pick(INT32) : draw.int(-100_000, 100_000);
        if (scalar === ScalarType.INT32) writer.int32(value);
        else if (scalar === ScalarType.SINT32) writer.sint32(value);
        else writer.sfixed32(value);
        return;
      }
      case ScalarType.UINT32:
      case ScalarType.FIXED32: {
        const value = draw.chance(0.7) ? draw.pick(UINT32) : draw.int(0, 100_000);
        if (scalar === ScalarType.UINT32) writer.uint32(value);
        else writer.fixed32(value);
        return;
      }
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64: {
        const value = draw.chance(0.6) ? draw.pick(INT64) : BigInt(draw.int(0, 2 ** 31)) * BigInt(draw.int(1, 1_000_000));
        if (scalar === ScalarType.INT64) writer.int64(value);
        else if (scalar === ScalarType.SINT64) writer.sint64(value);
        else writer.sfixed64(value);
        return;
      }
      case ScalarType.UINT64:
      case ScalarType.FIXED64: {
        const value = draw.chance(0.6) ? draw.pick(UINT64) : BigInt(draw.int(0, 2 ** 31));
        if (scalar === ScalarType.UINT64) writer.uint64(value);
        else writer.fixed64(value);
        return;
      }
    }
  }
}

/** The wire type each scalar travels as. */
const WIRE_TYPES: Readonly<Record<ScalarType, WireType>> = {
  [ScalarType.STRING]: WireType.LengthDelimited,
  [ScalarType.BYTES]: WireType.LengthDelimited,
  [ScalarType.DOUBLE]: WireType.Bit64,
  [ScalarType.FIXED64]: WireType.Bit64,
  [ScalarType.SFIXED64]: WireType.Bit64,
  [ScalarType.FLOAT]: WireType.Bit32,
  [ScalarType.FIXED32]: WireType.Bit32,
  [ScalarType.SFIXED32]: WireType.Bit32,
  [ScalarType.INT32]: WireType.Varint,
  [ScalarType.INT64]: WireType.Varint,
  [ScalarType.UINT32]: WireType.Varint,
  [ScalarType.UINT64]: WireType.Varint,
  [ScalarType.SINT32]: WireType.Varint,
  [ScalarType.SINT64]: WireType.Varint,
  [ScalarType.BOOL]: WireType.Varint,
};

function wireTypeOf(scalar: ScalarType): WireType {
  return WIRE_TYPES[scalar];
}
