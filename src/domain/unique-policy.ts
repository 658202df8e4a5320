import type { FieldViolation } from './errors';
import { parseIsoDuration } from './iso-duration';
import {
  JOB_STATES,
  UNIQUE_CONFLICTS,
  UNIQUE_DIMENSIONS,
  type Job,
  type JobState,
  type UniqueConflict,
  type UniqueConstraint,
  type UniqueDimension,
  type UniquePolicy,
} from './job';
import type { JsonObject, JsonValue } from './json';

/** The states a duplicate counts in when the policy names none (section 6.1). */
export const DEFAULT_UNIQUE_STATES: readonly JobState[] = ['available', 'active', 'scheduled', 'retryable', 'pending'];

/** A policy as a producer submits it: every field optional, values unchecked. */
export interface UniquePolicyInput {
  keys?: readonly string[];
  argsKeys?: readonly string[];
  metaKeys?: readonly string[];
  period?: string;
  states?: readonly string[];
  onConflict?: string;
}

const isDimension = (name: string): name is UniqueDimension => (UNIQUE_DIMENSIONS as readonly string[]).includes(name);
const isConflict = (name: string): name is UniqueConflict => (UNIQUE_CONFLICTS as readonly string[]).includes(name);
const isState = (name: string): name is JobState => (JOB_STATES as readonly string[]).includes(name);

/** Most names in one list of a policy, and longest name: a policy stays small beside its job. */
export const UNIQUE_NAMES_MAX = 32;
export const UNIQUE_NAME_MAX_CHARS = 255;

/** Names, each at most once, few and short. */
function names(values: readonly string[], field: string, bad: (field: string, description: string) => void): string[] {
  if (values.length > UNIQUE_NAMES_MAX) bad(field, `must list at most ${UNIQUE_NAMES_MAX} names`);
  else if (values.some((name) => name.length > UNIQUE_NAME_MAX_CHARS))
    bad(field, `names must be at most ${UNIQUE_NAME_MAX_CHARS} characters`);
  else if (new Set(values).size !== values.length) bad(field, 'must not repeat a name');
  return [...values];
}

/** The characters of a policy's names and period, for size bounds. */
export function uniquePolicyChars(policy: UniquePolicy): number {
  const lists = [policy.keys, policy.argsKeys ?? [], policy.metaKeys ?? [], policy.states];
  return lists.reduce((sum, list) => sum + list.reduce((n, name) => n + name.length + 2, 0), (policy.period?.length ?? 0) + 64 + 16);
}

/**
 * Checks a policy against the job it belongs to and computes its key; every
 * problem is reported under `path` (an `invalid_request` in the spec's
 * terms, listed with the job's other violations). Undefined when there is
 * a problem or no policy.
 */
export function resolveUniqueConstraint(
  input: UniquePolicyInput | undefined,
  job: Pick<Job, 'type' | 'queue' | 'args' | 'meta'>,
  path: string,
  violations: FieldViolation[],
  digest: (text: string) => string,
): UniqueConstraint | undefined {
  if (input === undefined) return undefined;
  const before = violations.length;
  const bad = (field: string, description: string): void => {
    violations.push({ field: `${path}.${field}`, description });
  };
  const keys = names(input.keys ?? [], 'keys', bad);
  const unknown = keys.filter((key) => !isDimension(key));
  if (unknown.length > 0) bad('keys', `${JSON.stringify(unknown[0])} is not one of ${UNIQUE_DIMENSIONS.join(', ')}`);
  const dimensions = keys.filter(isDimension);
  if (!dimensions.includes('type')) dimensions.unshift('type');

  const policy: UniquePolicy = { keys: dimensions, states: [...DEFAULT_UNIQUE_STATES], onConflict: 'reject' };
  const argsKeys = input.argsKeys ?? [];
  if (argsKeys.length > 0) {
    if (!dimensions.includes('args')) bad('args_keys', 'needs "args" in keys');
    const first = job.args[0];
    const object = isObject(first) ? first : undefined;
    if (object === undefined) bad('args_keys', 'needs the first argument to be an object');
    else
      argsKeys
        .filter((key) => !Object.hasOwn(object, key))
        .forEach((key) => bad('args_keys', `${JSON.stringify(key)} is not a key of the first argument`));
    policy.argsKeys = names(argsKeys, 'args_keys', bad);
  }
  const metaKeys = input.metaKeys ?? [];
  if (dimensions.includes('meta') && metaKeys.length === 0) bad('meta_keys', 'is required when "meta" is in keys');
  if (metaKeys.length > 0) {
    if (!dimensions.includes('meta')) bad('meta_keys', 'needs "meta" in keys');
    policy.metaKeys = names(metaKeys, 'meta_keys', bad);
  }
  if (input.period !== undefined && input.period !== '') {
    // A long text is no duration this parser accepts; refused before parsing it.
    const ms = input.period.length > UNIQUE_NAME_MAX_CHARS ? undefined : parseIsoDuration(input.period);
    if (ms === undefined || ms <= 0) bad('period', 'must be a positive ISO 8601 duration of weeks, days, hours, minutes or seconds');
    else {
      policy.period = input.period;
      policy.periodMs = ms;
    }
  }
  const states = names(input.states ?? [], 'states', bad);
  const badState = states.find((state) => !isState(state));
  if (badState !== undefined) bad('states', `${JSON.stringify(badState)} is not one of ${JOB_STATES.join(', ')}`);
  if (states.length > 0) policy.states = states.filter(isState);
  const onConflict = input.onConflict ?? '';
  if (onConflict !== '') {
    if (isConflict(onConflict)) policy.onConflict = onConflict;
    else bad('on_conflict', `must be one of ${UNIQUE_CONFLICTS.join(', ')}`);
  }
  if (violations.length > before) return undefined;
  return { policy, key: digest(uniqueKeyMaterial(policy, job)) };
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pick(object: JsonObject, keys: readonly string[]): JsonObject {
  const picked: JsonObject = {};
  for (const key of keys) if (Object.hasOwn(object, key)) picked[key] = object[key]!;
  return picked;
}

/**
 * What a job's uniqueness key is the digest of under a checked policy
 * (section 4.1): the canonical JSON of the chosen dimensions. The digest
 * (SHA-256) is the caller's to compute: the domain uses no library.
 */
export function uniqueKeyMaterial(policy: UniquePolicy, job: Pick<Job, 'type' | 'queue' | 'args' | 'meta'>): string {
  const dimensions: JsonObject = { type: job.type };
  if (policy.keys.includes('queue')) dimensions['queue'] = job.queue;
  if (policy.keys.includes('args')) {
    const first = job.args[0];
    dimensions['args'] = policy.argsKeys !== undefined && isObject(first) ? pick(first, policy.argsKeys) : job.args;
  }
  if (policy.keys.includes('meta')) dimensions['meta'] = pick(job.meta, policy.metaKeys ?? []);
  return canonicalJson(dimensions);
}

/**
 * RFC 8785-style canonical JSON: object keys sorted by UTF-16 code units at
 * every level, no whitespace, strings NFC-normalised first (section 4.2).
 * JSON.stringify writes numbers and escapes strings as RFC 8785 does.
 */
export function canonicalJson(value: JsonValue): string {
  if (typeof value === 'string') return JSON.stringify(value.normalize('NFC'));
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value).map((key) => [key.normalize('NFC'), value[key]!] as const);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** When the job's key stops blocking others by time: created_at plus the period (undefined: never). */
export function uniqueUntil(job: Job): number | undefined {
  const periodMs = job.unique?.policy.periodMs;
  return periodMs === undefined ? undefined : job.createdAt + periodMs;
}

/**
 * Whether `existing` is a duplicate for a new job under `policy` at `now`
 * (section 7.4): it is in one of the policy's states, within the policy's
 * period from its creation and within its own.
 */
export function isDuplicate(policy: UniquePolicy, existing: Job, now: number): boolean {
  if (!policy.states.includes(existing.state)) return false;
  if (policy.periodMs !== undefined && existing.createdAt + policy.periodMs <= now) return false;
  const until = uniqueUntil(existing);
  return until === undefined || until > now;
}

/** Whether a job in `state` still holds its key under its own policy: it leaves it when it leaves the counted states. */
export function holdsUniqueKey(job: Job, state: JobState = job.state): job is Job & { unique: UniqueConstraint } {
  return job.unique !== undefined && job.unique.policy.states.includes(state);
}

/** The policy as the contract shows it: the effective values, under their contract names. */
export interface UniquePolicyView {
  keys: string[];
  argsKeys: string[];
  metaKeys: string[];
  period: string;
  states: string[];
  onConflict: string;
}

export function describeUniquePolicy(policy: UniquePolicy): UniquePolicyView {
  return {
    keys: [...policy.keys],
    argsKeys: policy.argsKeys ?? [],
    metaKeys: policy.metaKeys ?? [],
    period: policy.period ?? '',
    states: [...policy.states],
    onConflict: policy.onConflict,
  };
}
