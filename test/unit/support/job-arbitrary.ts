import * as fc from 'fast-check';
import { JOB_STATES, type Job, type JobError } from '../../../src/domain/job';
import { DEFAULT_RETRY_POLICY } from '../../../src/domain/retry-policy';
import { hasProtoKey } from '../../support/proto-key';
import { activeJob } from './active-job';

const optional = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arbitrary, { nil: undefined });
/** Milliseconds, whole seconds among them, the epoch included, and both sides of 2^32 seconds (where uint32 ends). */
const time = fc.oneof(
  fc.integer({ min: 0, max: 253_402_300_799_999 }),
  fc.integer({ min: 0, max: 5_000 }).map((s) => s * 1000),
  fc.constantFrom(4_294_967_295_000, 4_294_967_295_999, 4_294_967_296_000),
);
const duration = fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.constantFrom(0, 499, 500, 1_500, 30_000));
const text = fc.string({ maxLength: 20, unit: fc.constantFrom('a', 'é', '日', '🙂', '', ' ') });
const json = fc.jsonValue({ maxDepth: 3 }).filter((value) => !hasProtoKey(value)) as fc.Arbitrary<Job['result'] & {}>;
const object = fc.dictionary(text, json, { maxKeys: 4 }).filter((value) => !hasProtoKey(value));
const jobError: fc.Arbitrary<JobError> = fc.record(
  {
    type: text,
    message: text,
    backtrace: fc.array(text, { maxLength: 2 }),
    attempt: fc.integer({ min: 0, max: 30 }),
    occurredAt: time,
    code: fc.constantFrom('retry' as const, 'discard' as const, 'dead_letter' as const, 'fail' as const),
    details: object,
  },
  { requiredKeys: ['type', 'message', 'backtrace', 'attempt', 'occurredAt'] },
);

/** Jobs in every state, with the envelope's optional parts present or not. */
export const jobs: fc.Arbitrary<Job> = fc
  .record({
    specversion: fc.constantFrom('1.0', ''),
    id: fc.uuid(),
    type: text,
    queue: text,
    args: fc.array(json, { maxLength: 4 }),
    meta: object,
    priority: fc.integer({ min: -1000, max: 1000 }),
    timeoutMs: duration,
    gracePeriodMs: duration,
    heartbeatTimeoutMs: duration,
    visibilityTimeoutMs: duration,
    totalTimeoutMs: optional(duration),
    enqueueTtlMs: optional(duration),
    scheduledAt: optional(time),
    expiresAt: optional(time),
    schema: optional(text),
    retry: fc.oneof(
      fc.constant(DEFAULT_RETRY_POLICY),
      fc.record({
        ...Object.fromEntries(Object.entries(DEFAULT_RETRY_POLICY).map(([key, value]) => [key, fc.constant(value)])),
        maxAttempts: fc.integer({ min: 1, max: 50 }),
        initialIntervalMs: duration,
        jitter: fc.boolean(),
        nonRetryableErrors: fc.array(text, { maxLength: 2 }),
      }) as fc.Arbitrary<Job['retry']>,
    ),
    unique: optional(
      fc.record({
        policy: fc.record({
          keys: fc.constant(['type' as const]),
          states: fc.constant(['available' as const]),
          onConflict: fc.constant('reject' as const),
          periodMs: optional(duration),
        }),
        key: text,
      }),
    ),
    state: fc.constantFrom(...JOB_STATES),
    attempt: fc.integer({ min: 0, max: 30 }),
    createdAt: time,
    enqueuedAt: optional(time),
    startedAt: optional(time),
    completedAt: optional(time),
    error: optional(jobError),
    errors: fc.array(jobError, { maxLength: 2 }),
    result: optional(json),
    nextRetryAt: optional(time),
    deadLetter: fc.boolean(),
    lease: fc.record({ workerId: text, token: text, expiresAt: time, renewedAt: time, isConfirmed: fc.boolean() }),
    progress: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    progressData: optional(object),
    lastCheckpoint: optional(json),
    workflow: optional(fc.record({ id: fc.uuid(), node: fc.nat(10), step: text })),
    parentResults: optional(object),
  })
  .map((fields) => {
    const job: Job = activeJob();
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(job, { [key]: value });
    return job;
  });
