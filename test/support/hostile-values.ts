import * as fc from 'fast-check';
import { MAX_JSON_DEPTH } from '../../src/domain/json';
import type { RawSecondsNanos } from './raw-protobuf';

/**
 * Values a hostile or careless client sends, as fast-check arbitraries:
 * JSON at and past what the server stores, timestamps at and past its
 * range. The envelope property test and the fuzzer draw from them.
 */

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** n arrays, one inside the other, around 1. */
function nestedArrays(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** n objects, one inside the other ({a: {a: ... 1}}). */
export function nestedObjects(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** JSON a producer may send: unicode of every UTF-8 length, -0, extreme doubles, nesting to the limit (31 levels inside an argument). */
export const validJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }), weight: 4 },
  { arbitrary: fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }), weight: 2 },
  fc.constantFrom<unknown>(-0, [-0, { z: -0 }], Number.MAX_VALUE, Number.MIN_VALUE, -(2 ** 53) - 2, '', '\u{10ffff}', 'a\u0000b', '\ud800'),
  fc.constant(nestedArrays(MAX_JSON_DEPTH - 1)),
);

/**
 * JSON no store can hold as it is: non-finite numbers, values without a
 * kind, nesting past the limit. `depth` is where the value sits (an
 * argument is one level down, a result at the top), so that the shallowest
 * value too deep is the one just past the limit. A value without a kind is
 * invalid only inside a list: a result without one is no result.
 */
export function invalidJson(depth: number): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(
    Number.NaN,
    Infinity,
    -Infinity,
    depth > 0 ? undefined : [undefined],
    [1, Number.NaN],
    { a: [Infinity] },
    [undefined],
    nestedArrays(MAX_JSON_DEPTH + 1 - depth),
    nestedArrays(40),
  );
}

/** The test ManualClock's start (2026-01-01), in seconds. */
const NOW_SECONDS = 1_767_225_600n;
const LAST_SECOND = 253_402_300_799n; // 9999-12-31T23:59:59Z

/**
 * Timestamps at and beyond 1970 and 9999, seconds no Date holds (10^13),
 * odd nanos, and (`isUndecodableAllowed`) seconds beyond the safe integer
 * range, which make the whole request undecodable.
 */
export function rawTimestamp(isUndecodableAllowed: boolean): fc.Arbitrary<RawSecondsNanos> {
  const beyondSafe = fc.constantFrom(2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n));
  return fc.record({
    seconds: fc.oneof(
      { arbitrary: fc.constantFrom(NOW_SECONDS - 86_400n, NOW_SECONDS + 86_400n, NOW_SECONDS + 3_600n), weight: 12 },
      { arbitrary: fc.bigInt(0n, LAST_SECOND), weight: 6 },
      {
        arbitrary: fc.constantFrom(0n, 1n, -1n, LAST_SECOND, LAST_SECOND + 1n, 10n ** 13n, 8_640_000_000_000n, -62_135_596_800n),
        weight: 4,
      },
      { arbitrary: isUndecodableAllowed ? beyondSafe : fc.constant(0n), weight: 1 },
    ),
    nanos: fc.oneof(
      { arbitrary: fc.constant(0), weight: 4 },
      fc.constantFrom(999_999_999, 500_000, 1, -1, 1_000_000_000, INT32_MAX, INT32_MIN),
    ),
  });
}

/** Timestamps the server stores: around the test clock's now, or anywhere in 1970..9999. */
export const storableTimestamp: fc.Arbitrary<RawSecondsNanos> = fc.record({
  seconds: fc.oneof(fc.constantFrom(NOW_SECONDS - 86_400n, NOW_SECONDS + 86_400n), fc.bigInt(0n, LAST_SECOND - 1n)),
  nanos: fc.integer({ min: 0, max: 999_999_999 }),
});
