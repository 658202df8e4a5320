import * as fc from 'fast-check';
import { sha256Hex } from '../../../lib/sha256';
import type { FieldViolation } from '../../../src/domain/errors';
import type { Job, JobState, UniquePolicy } from '../../../src/domain/job';
import type { JsonValue } from '../../../src/domain/json';
import {
  DEFAULT_UNIQUE_STATES,
  UNIQUE_NAMES_MAX,
  canonicalJson,
  describeUniquePolicy,
  holdsUniqueKey,
  isDuplicate,
  resolveUniqueConstraint,
  uniqueKeyMaterial,
  uniqueUntil,
  type UniquePolicyInput,
} from '../../../src/domain/unique-policy';
import { propertyParameters } from '../../support/property';
import { activeJob } from '../support/active-job';

/** The job of the spec's example (section 4.3). */
const emailJob = {
  type: 'email.send',
  queue: 'notifications',
  args: [{ user_id: 42, template: 'welcome', locale: 'en-US' }],
  meta: { tenant_id: 'acme', trace_id: 'abc123' },
};

function resolve(input: UniquePolicyInput | undefined, job: Pick<Job, 'type' | 'queue' | 'args' | 'meta'> = emailJob) {
  const violations: FieldViolation[] = [];
  const constraint = resolveUniqueConstraint(input, job, 'jobs[0].unique', violations, sha256Hex);
  return { constraint, violations };
}

/** Whatever the reordering, the same value: objects rebuilt with their keys in another (reversed) order. */
function reordered(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .toReversed()
      .map(([key, item]) => [key, reordered(item)]),
  );
}

describe('canonical JSON of a uniqueness key (ojs-unique-jobs 4.1, 4.2)', () => {
  it('sorts object keys at every level and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
  });

  it('keeps the order of array items', () => {
    expect(canonicalJson([2, 1, 'b', 'a'])).toBe('[2,1,"b","a"]');
  });

  it('sorts keys by UTF-16 code units, capitals before lower case', () => {
    expect(canonicalJson({ b: 1, B: 2, a: 3, '\u00e9': 4, '\u{1f600}': 5, '\uff21': 6 })).toBe(
      '{"B":2,"a":3,"b":1,"\u00e9":4,"\u{1f600}":5,"\uff21":6}',
    );
  });

  it('normalises strings and keys to NFC, so composed and decomposed accents give one key', () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    expect(canonicalJson({ [decomposed]: decomposed })).toBe(canonicalJson({ [composed]: composed }));
    expect(canonicalJson(decomposed)).toBe(`"${composed}"`);
  });

  it('writes numbers in their shortest form and escapes as JSON does', () => {
    expect(canonicalJson([1.0, 1.5, 1e21, -0, 0.000001])).toBe('[1,1.5,1e+21,0,0.000001]');
    expect(canonicalJson('a"b\\c\n\u0001')).toBe('"a\\"b\\\\c\\n\\u0001"');
  });

  it('gives the same text whatever the order of the keys, and text that parses back to the value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = canonicalJson(value as JsonValue);
        expect(canonicalJson(reordered(value as JsonValue))).toBe(text);
        expect(canonicalJson(JSON.parse(text) as JsonValue)).toBe(text);
      }),
      propertyParameters(),
    );
  });
});

describe('the material of a uniqueness key', () => {
  const policy = (over: Partial<UniquePolicy>): UniquePolicy => ({
    keys: ['type'],
    states: [...DEFAULT_UNIQUE_STATES],
    onConflict: 'reject',
    ...over,
  });

  it("is the spec's example: type, queue and the chosen keys of the first argument", () => {
    const material = uniqueKeyMaterial(policy({ keys: ['type', 'queue', 'args'], argsKeys: ['user_id'] }), emailJob);
    expect(material).toBe('{"args":{"user_id":42},"queue":"notifications","type":"email.send"}');
  });

  it('holds the type whatever the keys, all args when no args keys are chosen, and only the chosen meta', () => {
    expect(uniqueKeyMaterial(policy({ keys: ['queue'] }), emailJob)).toBe('{"queue":"notifications","type":"email.send"}');
    expect(uniqueKeyMaterial(policy({ keys: ['type', 'args'] }), { ...emailJob, args: [1, 'two'] })).toBe(
      '{"args":[1,"two"],"type":"email.send"}',
    );
    expect(uniqueKeyMaterial(policy({ keys: ['type', 'meta'], metaKeys: ['tenant_id'] }), emailJob)).toBe(
      '{"meta":{"tenant_id":"acme"},"type":"email.send"}',
    );
  });
});

describe('resolving a unique policy at enqueue', () => {
  it('applies the defaults: the type alone, the non-terminal states, reject, no period', () => {
    const { constraint, violations } = resolve({});
    expect(violations).toEqual([]);
    expect(constraint).toEqual({
      policy: { keys: ['type'], states: ['available', 'active', 'scheduled', 'retryable', 'pending'], onConflict: 'reject' },
      key: sha256Hex('{"type":"email.send"}'),
    });
  });

  it('keeps what the policy chose and keys the job by the lowercase hex SHA-256 of its material', () => {
    const { constraint } = resolve({
      keys: ['queue', 'args', 'meta'],
      argsKeys: ['user_id'],
      metaKeys: ['tenant_id'],
      period: 'PT1H',
      states: ['available', 'completed'],
      onConflict: 'ignore',
    });
    expect(constraint!.policy).toEqual({
      keys: ['type', 'queue', 'args', 'meta'],
      argsKeys: ['user_id'],
      metaKeys: ['tenant_id'],
      period: 'PT1H',
      periodMs: 3_600_000,
      states: ['available', 'completed'],
      onConflict: 'ignore',
    });
    expect(constraint!.key).toMatch(/^[0-9a-f]{64}$/);
    expect(constraint!.key).toBe(sha256Hex(uniqueKeyMaterial(constraint!.policy, emailJob)));
  });

  it('gives jobs that differ only outside the chosen dimensions the same key, and others another', () => {
    const input = { keys: ['args'], argsKeys: ['user_id'] };
    const key = (job: typeof emailJob) => resolve(input, job).constraint!.key;
    expect(key({ ...emailJob, queue: 'other', args: [{ user_id: 42, template: 'bye', locale: 'fr' }] })).toBe(key(emailJob));
    expect(key({ ...emailJob, args: [{ ...emailJob.args[0]!, user_id: 43 }] })).not.toBe(key(emailJob));
    expect(key({ ...emailJob, type: 'sms.send' })).not.toBe(key(emailJob));
  });

  it('resolves no constraint when there is no policy', () => {
    expect(resolve(undefined)).toEqual({ constraint: undefined, violations: [] });
  });

  it.each<[string, UniquePolicyInput, string, string]>([
    ['an unknown dimension', { keys: ['colour'] }, 'keys', '"colour" is not one of type, queue, args, meta'],
    ['a dimension in the wrong case', { keys: ['Type'] }, 'keys', '"Type" is not one of type, queue, args, meta'],
    ['a repeated name', { keys: ['args', 'args'] }, 'keys', 'must not repeat a name'],
    [
      'too many names',
      { keys: ['meta'], metaKeys: Array.from({ length: UNIQUE_NAMES_MAX + 1 }, (_, i) => `m${i}`) },
      'meta_keys',
      'must list at most 32 names',
    ],
    ['a name too long', { metaKeys: ['m'.repeat(256)], keys: ['meta'] }, 'meta_keys', 'names must be at most 255 characters'],
    ['args keys without "args"', { argsKeys: ['user_id'] }, 'args_keys', 'needs "args" in keys'],
    [
      'args keys missing from the first argument',
      { keys: ['args'], argsKeys: ['account'] },
      'args_keys',
      '"account" is not a key of the first argument',
    ],
    ['"meta" without meta keys', { keys: ['meta'] }, 'meta_keys', 'is required when "meta" is in keys'],
    ['meta keys without "meta"', { metaKeys: ['tenant_id'] }, 'meta_keys', 'needs "meta" in keys'],
    ['a period in months', { period: 'P1M' }, 'period', 'must be a positive ISO 8601 duration of weeks, days, hours, minutes or seconds'],
    ['a zero period', { period: 'PT0S' }, 'period', 'must be a positive ISO 8601 duration of weeks, days, hours, minutes or seconds'],
    [
      'a period too long to be one',
      { period: `PT${'1'.repeat(300)}S` },
      'period',
      'must be a positive ISO 8601 duration of weeks, days, hours, minutes or seconds',
    ],
    [
      'an unknown state',
      { states: ['available', 'done'] },
      'states',
      '"done" is not one of scheduled, available, pending, active, completed, retryable, cancelled, discarded',
    ],
    ['an unknown conflict policy', { onConflict: 'shrug' }, 'on_conflict', 'must be one of reject, ignore, replace'],
    [
      'replace_except_schedule, which is not offered',
      { onConflict: 'replace_except_schedule' },
      'on_conflict',
      'must be one of reject, ignore, replace',
    ],
  ])('refuses %s, naming the field', (_, input, field, description) => {
    expect(resolve(input)).toEqual({ constraint: undefined, violations: [{ field: `jobs[0].unique.${field}`, description }] });
  });

  it('refuses args keys when the first argument is not an object', () => {
    const { violations } = resolve({ keys: ['args'], argsKeys: ['user_id'] }, { ...emailJob, args: [42] });
    expect(violations).toEqual([{ field: 'jobs[0].unique.args_keys', description: 'needs the first argument to be an object' }]);
  });

  it('reports every problem at once, after the violations found before it', () => {
    const violations: FieldViolation[] = [{ field: 'jobs[0].type', description: 'earlier' }];
    const input = { keys: ['colour', 'meta'], period: 'soon', onConflict: 'shrug' };
    expect(resolveUniqueConstraint(input, emailJob, 'jobs[0].unique', violations, sha256Hex)).toBeUndefined();
    expect(violations.map((v) => v.field)).toEqual([
      'jobs[0].type',
      'jobs[0].unique.keys',
      'jobs[0].unique.meta_keys',
      'jobs[0].unique.period',
      'jobs[0].unique.on_conflict',
    ]);
  });
});

describe('when an existing job is a duplicate (section 7.4)', () => {
  const CREATED = 1_000_000;
  const HOUR = 3_600_000;
  const policy = (over: Partial<UniquePolicy> = {}): UniquePolicy => ({
    keys: ['type'],
    states: [...DEFAULT_UNIQUE_STATES],
    onConflict: 'reject',
    ...over,
  });
  /** An existing job in `state`, created at CREATED, holding its key under `own`. */
  const existing = (state: JobState, own: UniquePolicy = policy()): Job =>
    activeJob({ state, createdAt: CREATED, lease: undefined, unique: { policy: own, key: 'k' } });

  it.each<JobState>(['available', 'active', 'scheduled', 'retryable', 'pending'])('counts a job %s by default', (state) => {
    expect(isDuplicate(policy(), existing(state), CREATED)).toBe(true);
  });

  it.each<JobState>(['completed', 'cancelled', 'discarded'])('ignores a job %s by default', (state) => {
    expect(isDuplicate(policy(), existing(state), CREATED)).toBe(false);
  });

  it('counts a finished job when the new policy lists its state', () => {
    const withCompleted = policy({ states: [...DEFAULT_UNIQUE_STATES, 'completed'] });
    expect(isDuplicate(withCompleted, existing('completed', withCompleted), CREATED + HOUR)).toBe(true);
    expect(isDuplicate(policy({ states: ['active'] }), existing('available'), CREATED)).toBe(false);
  });

  it("counts a job until the new policy's period from its creation has passed", () => {
    const hourly = policy({ period: 'PT1H', periodMs: HOUR });
    expect(isDuplicate(hourly, existing('available'), CREATED + HOUR - 1)).toBe(true);
    expect(isDuplicate(hourly, existing('available'), CREATED + HOUR)).toBe(false);
  });

  it('counts a job only within its own period, whatever the new policy says', () => {
    const own = policy({ period: 'PT1M', periodMs: 60_000 });
    expect(isDuplicate(policy(), existing('available', own), CREATED + 59_999)).toBe(true);
    expect(isDuplicate(policy(), existing('available', own), CREATED + 60_000)).toBe(false);
    expect(uniqueUntil(existing('available', own))).toBe(CREATED + 60_000);
  });

  it('counts a job without a period for as long as it stays in a counted state', () => {
    expect(isDuplicate(policy(), existing('scheduled'), CREATED + 365 * 24 * HOUR)).toBe(true);
    expect(uniqueUntil(existing('scheduled'))).toBeUndefined();
  });
});

describe('holding a key', () => {
  it('is for a job with a policy while it is in one of its states', () => {
    const job = activeJob({
      state: 'available',
      lease: undefined,
      unique: { policy: { keys: ['type'], states: ['available'], onConflict: 'reject' }, key: 'k' },
    });
    expect(holdsUniqueKey(job)).toBe(true);
    expect(holdsUniqueKey(job, 'active')).toBe(false);
    expect(holdsUniqueKey({ ...job, unique: undefined })).toBe(false);
  });

  it('shows the effective policy under its contract names, empty where unset', () => {
    expect(describeUniquePolicy({ keys: ['type'], states: ['available'], onConflict: 'ignore' })).toEqual({
      keys: ['type'],
      argsKeys: [],
      metaKeys: [],
      period: '',
      states: ['available'],
      onConflict: 'ignore',
    });
  });
});
