import * as fc from 'fast-check';
import { JobState, type DeepPartial, type Job } from '../../gen/ojs/server/v1/job';
import { MAX_JSON_DEPTH } from '../../src/domain/json';
import { invalidJson, nestedObjects, rawTimestamp, storableTimestamp, validJson } from './hostile-values';
import type { RawSecondsNanos } from './raw-protobuf';

/**
 * Job envelopes as a producer, careful or hostile, may send them. Every
 * producer-settable field ranges over valid values, boundary values and
 * values the server must refuse; an envelope is either clean or has one to
 * three fields drawn from the invalid values (so that most runs reach the
 * store, and a refusal can be traced to the fields that earned it).
 * Validity that depends on several fields or on arithmetic (timestamps,
 * sizes, timeouts against each other) is for envelope-oracle.ts to decide.
 */

/** A producer-settable field, or group of fields, with its valid and invalid values. */
export interface EnvelopeSpec {
  specversion: string;
  /** '<fresh>': a new UUIDv7 chosen by the client; '<long>': 40,000 characters; '': chosen by the server. */
  id: string;
  type: string;
  queue: string;
  args: unknown[];
  meta: Record<string, unknown> | undefined;
  priority: number;
  timeout: number;
  visibilityTimeout: number;
  totalTimeout: number;
  enqueueTtl: number;
  heartbeatTimeout: number;
  gracePeriod: number | undefined;
  schema: string;
  retry: RetrySpec | undefined;
}

export interface RetrySpec {
  maxAttempts: number | undefined;
  initialInterval: string | undefined;
  backoffCoefficient: number | undefined;
  maxInterval: string | undefined;
  jitter: boolean | undefined;
  nonRetryableErrors: string[];
  onExhaustion: number;
}

/** The request field each spec field is reported as (under jobs[i]). */
export const FIELD_PATHS: Record<keyof EnvelopeSpec, string> = {
  specversion: 'specversion',
  id: 'id',
  type: 'type',
  queue: 'queue',
  args: 'args',
  meta: 'meta',
  priority: 'priority',
  timeout: 'timeout',
  visibilityTimeout: 'visibility_timeout',
  totalTimeout: 'total_timeout',
  enqueueTtl: 'enqueue_ttl',
  heartbeatTimeout: 'heartbeat_timeout',
  gracePeriod: 'grace_period',
  schema: 'schema',
  retry: 'retry',
};

/** One generated envelope. */
export interface EnvelopeCase {
  spec: EnvelopeSpec;
  /** The spec fields that hold a value drawn from the invalid ones. */
  invalidFields: (keyof EnvelopeSpec)[];
  /** Inside `retry`, when it is invalid: the fields (proto names) that are. */
  invalidRetryFields: string[];
  scheduledAt: RawSecondsNanos | undefined;
  expiresAt: RawSecondsNanos | undefined;
  /** Characters of one more string argument, to reach the size limit (0: none). */
  paddingChars: number;
  /** Characters of a string in meta, to reach its size limit (0: none). */
  metaPaddingChars: number;
  /** System-managed fields a producer has no business setting: the server ignores them. */
  ignored: DeepPartial<Job>;
  /** System-managed timestamps (by field number), ignored as well: their values may be anything. */
  ignoredTimestamps: [number, RawSecondsNanos][];
  /** The result the worker acknowledges the job with, and whether it is valid JSON. */
  result: { value: unknown; isValid: boolean };
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const validDurations = fc.oneof(
  fc.constantFrom<string | undefined>(undefined, 'PT1S', 'PT0.5S', 'PT0.001S', 'PT5M', 'P1D', 'P365D', 'P52W', 'PT8760H', 'P1W2DT3H4M5.5S'),
  fc.integer({ min: 1, max: 3_600 }).map((n) => `PT${n}S`),
);
const invalidDurations = fc.constantFrom(
  'P366D',
  'P53W',
  'P999999999D',
  'PT0S',
  'PT0.0001S',
  'P1Y',
  'P1M',
  '1s',
  '',
  'PT',
  'P',
  'PTInfinityH',
  '-PT1S',
);
/** Mostly short, and max_interval mostly long: a max_interval shorter than the initial one is refused. */
const validInitialIntervals = fc.oneof(
  { arbitrary: fc.constantFrom<string | undefined>(undefined, 'PT1S', 'PT0.5S', 'PT0.001S', 'PT5M'), weight: 4 },
  validDurations,
);
const validMaxIntervals = fc.oneof(
  { arbitrary: fc.constantFrom<string | undefined>(undefined, 'PT5M', 'P1D', 'P365D', 'P52W', 'PT8760H'), weight: 4 },
  validDurations,
);
const seconds = (valid: number[]) => fc.oneof(fc.constantFrom(...valid), fc.integer({ min: 0, max: 1_000_000 }));
const negativeSeconds = fc.constantFrom(-1, -60, INT32_MIN);

/** Every retry field valid. */
const validRetry: fc.Arbitrary<RetrySpec> = fc.record({
  maxAttempts: fc.constantFrom(undefined, 0, 1, 3, 25, INT32_MAX),
  initialInterval: validInitialIntervals,
  backoffCoefficient: fc.constantFrom(undefined, 1, 1.5, 2, 10, 1e308),
  maxInterval: validMaxIntervals,
  jitter: fc.constantFrom(undefined, true, false),
  nonRetryableErrors: fc.oneof(
    fc.array(fc.constantFrom('Timeout', 'net.*', 'SmtpError', 'é', 'e'.repeat(255)), { maxLength: 3 }),
    fc.constant(Array.from({ length: 100 }, (_, i) => `E${i}`)),
  ),
  onExhaustion: fc.constantFrom(0, 1, 2),
});

/** Invalid values of each retry field (proto names). */
const invalidRetryValues: { [K in keyof RetrySpec]: fc.Arbitrary<RetrySpec[K]> } = {
  maxAttempts: fc.constantFrom(-1, INT32_MIN),
  initialInterval: invalidDurations,
  backoffCoefficient: fc.constantFrom(0.999, 0, -1, Number.NaN, Infinity, -Infinity),
  maxInterval: invalidDurations,
  jitter: fc.constant(undefined),
  nonRetryableErrors: fc.constantFrom(
    Array.from({ length: 101 }, (_, i) => `E${i}`),
    [''],
    ['e'.repeat(256)],
    ['a\nb'],
  ),
  onExhaustion: fc.constantFrom(3, -1, 99),
};
const RETRY_PATHS: Record<keyof RetrySpec, string> = {
  maxAttempts: 'retry.max_attempts',
  initialInterval: 'retry.initial_interval',
  backoffCoefficient: 'retry.backoff_coefficient',
  maxInterval: 'retry.max_interval',
  jitter: 'retry.jitter',
  nonRetryableErrors: 'retry.non_retryable_errors',
  onExhaustion: 'retry.on_exhaustion',
};

/** A retry policy with one to three invalid fields, and their paths. */
const invalidRetry = fc
  .tuple(
    validRetry,
    fc.record(invalidRetryValues),
    fc.subarray(['maxAttempts', 'initialInterval', 'backoffCoefficient', 'maxInterval', 'nonRetryableErrors', 'onExhaustion'] as const, {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([valid, invalid, keys]) => {
    const retry: RetrySpec = { ...valid };
    for (const key of keys) Object.assign(retry, { [key]: invalid[key] });
    return { retry, paths: keys.map((key) => RETRY_PATHS[key]) };
  });

const validSpec: fc.Arbitrary<EnvelopeSpec> = fc.record({
  specversion: fc.constantFrom('', '1.0', '1.0.0', '1.0.12', '1.0-rc.1', `1.0-${'a'.repeat(60)}`),
  id: fc.constantFrom('<fresh>', ''),
  type: fc.oneof(
    fc.constantFrom('a', 'email.send', 'a_1.b_2.c3', 'a'.repeat(255)),
    fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8}){0,2}$/),
  ),
  queue: fc.oneof(fc.constantFrom('', 'default', 'q'.repeat(128)), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,12}$/)),
  args: fc.array(validJson, { maxLength: 4 }),
  meta: fc.oneof(
    fc.constant(undefined),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), validJson, { maxKeys: 4 }),
    fc.constant({ deep: nestedObjects(MAX_JSON_DEPTH - 1) }),
  ),
  priority: fc.oneof(fc.constantFrom(0, -1000, 1000), fc.integer({ min: -1000, max: 1000 })),
  timeout: fc.oneof({ arbitrary: fc.constantFrom(0, 1, 60), weight: 4 }, seconds([INT32_MAX])),
  visibilityTimeout: seconds([0, 1, INT32_MAX]),
  // Mostly none or long enough: one shorter than the timeout is refused.
  totalTimeout: fc.oneof(
    { arbitrary: fc.constant(0), weight: 4 },
    { arbitrary: fc.constantFrom(86_400, INT32_MAX), weight: 2 },
    seconds([1, 60]),
  ),
  enqueueTtl: seconds([0, 1, INT32_MAX]),
  heartbeatTimeout: seconds([0, 1, INT32_MAX]),
  gracePeriod: fc.constantFrom(undefined, 0, 30, INT32_MAX),
  schema: fc.constantFrom('', 'https://example.com/schemas/a.json', 's'.repeat(2_048), 'схема'),
  retry: fc.option(validRetry, { nil: undefined }),
});

const invalidSpec: { [K in keyof EnvelopeSpec]?: fc.Arbitrary<EnvelopeSpec[K]> } = {
  specversion: fc.constantFrom('2.0', '1', '1.0 ', 'v1.0', `1.0-${'a'.repeat(61)}`),
  id: fc.constantFrom('<long>', '0190A5B2-0000-7000-8000-000000000000', '0190a5b2-0000-4000-8000-000000000000', 'not-a-uuid', 'é'),
  type: fc.constantFrom('', 'a'.repeat(256), 'Email', '1a', 'a..b', 'a.', 'é', 'a b', 'a\u0000'),
  queue: fc.constantFrom('Q', '-a', '.a', 'a_b', 'q'.repeat(129), 'é', ' a'),
  args: fc.tuple(fc.array(validJson, { maxLength: 2 }), invalidJson(1)).map(([valid, bad]) => [...valid, bad]),
  meta: fc.constantFrom<Record<string, unknown>>({ a: Number.NaN }, { deep: nestedObjects(MAX_JSON_DEPTH) }, { a: [undefined] }),
  priority: fc.constantFrom(-1001, 1001, INT32_MAX, INT32_MIN),
  timeout: negativeSeconds,
  visibilityTimeout: negativeSeconds,
  totalTimeout: negativeSeconds,
  enqueueTtl: negativeSeconds,
  heartbeatTimeout: negativeSeconds,
  gracePeriod: fc.constantFrom(-1, INT32_MIN),
  schema: fc.constantFrom('x'.repeat(2_049), 'a\u0001b', '\u0085', 'a\u007f'),
};
const INVALID_KEYS = Object.keys(invalidSpec) as (keyof EnvelopeSpec)[];

const ignoredFields: fc.Arbitrary<DeepPartial<Job>> = fc.record(
  {
    state: fc.constantFrom(JobState.JOB_STATE_COMPLETED, JobState.JOB_STATE_ACTIVE, JobState.JOB_STATE_DISCARDED),
    attempt: fc.integer({ min: INT32_MIN, max: INT32_MAX }),
    workerId: fc.string({ unit: 'binary', maxLength: 8 }),
    deadLetter: fc.boolean(),
    progress: fc.double(),
    result: validJson,
    errors: fc.array(fc.record({ type: fc.string({ maxLength: 8 }), attempt: fc.integer() }), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

/**
 * An envelope alone in its request may carry padding to the size limits and
 * undecodable timestamps; one of a batch stays well below a request's 4 MiB
 * and decodable. A clean one has no invalid field (only the rules between
 * fields may still refuse it), so that a batch is not always refused whole.
 */
export function envelopeCase(options: { isAlone: boolean; isClean?: boolean }): fc.Arbitrary<EnvelopeCase> {
  const isClean = options.isClean ?? false;
  const timestamp = isClean ? storableTimestamp : rawTimestamp(options.isAlone);
  const padding = (limit: number) =>
    options.isAlone ? fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, fc.integer({ min: limit - 40, max: limit + 8 })) : fc.constant(0);
  const never = fc.constant(undefined);
  return fc
    .record({
      valid: validSpec,
      invalid: fc.record(invalidSpec as Required<typeof invalidSpec>),
      invalidKeys: isClean
        ? fc.constant([])
        : fc.oneof({ arbitrary: fc.constant([]), weight: 3 }, fc.subarray(INVALID_KEYS, { minLength: 1, maxLength: 3 })),
      badRetry: isClean ? never : fc.oneof({ arbitrary: never, weight: 5 }, invalidRetry),
      scheduledAt: fc.option(timestamp, { nil: undefined, freq: 2 }),
      expiresAt: fc.option(timestamp, { nil: undefined, freq: 2 }),
      paddingChars: padding(1024 * 1024),
      metaPaddingChars: padding(64 * 1024),
      ignored: ignoredFields,
      ignoredTimestamps: fc.array(fc.tuple(fc.constantFrom(22, 23, 24, 25, 29), rawTimestamp(options.isAlone)), { maxLength: 1 }),
      result: fc.oneof(
        { arbitrary: validJson.map((value) => ({ value, isValid: true })), weight: 4 },
        invalidJson(0).map((value) => ({ value, isValid: false })),
      ),
    })
    .map(({ valid, invalid, invalidKeys, badRetry, ...rest }): EnvelopeCase => {
      const spec: EnvelopeSpec = { ...valid };
      for (const key of invalidKeys) Object.assign(spec, { [key]: invalid[key] });
      const invalidFields = [...invalidKeys];
      const invalidRetryFields: string[] = [];
      if (badRetry !== undefined) {
        spec.retry = badRetry.retry;
        invalidFields.push('retry');
        invalidRetryFields.push(...badRetry.paths);
      }
      return { spec, invalidFields, invalidRetryFields, ...rest };
    });
}
