import { quote, type FieldViolation } from './errors';
import { errorTypeProblem } from './identifiers';
import { MAX_NON_RETRYABLE_ERRORS, MAX_RETRY_INTERVAL_MS } from './limits';
import { formatIsoDuration, parseIsoDuration } from './iso-duration';

export type OnExhaustion = 'discard' | 'dead_letter';

/** The effective retry policy of a job (ojs-retry section 2), in milliseconds. */
export interface RetryPolicy {
  /** Total attempts including the first; 0 and 1 both mean "never retry". */
  maxAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  jitter: boolean;
  nonRetryableErrors: string[];
  onExhaustion: OnExhaustion;
}

/** A policy as a producer writes it: any field may be absent, durations are ISO 8601. */
export interface RetryPolicyInput {
  maxAttempts?: number;
  initialInterval?: string;
  backoffCoefficient?: number;
  maxInterval?: string;
  jitter?: boolean;
  nonRetryableErrors?: string[];
  onExhaustion?: OnExhaustion;
}

/** The default policy that ojs-retry section 8 mandates. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maxIntervalMs: 300_000,
  jitter: true,
  nonRetryableErrors: [],
  onExhaustion: 'discard',
});

/**
 * Merges a partial policy with the defaults (ojs-retry section 8.1) and
 * validates the result (section 11). Violations name fields under `path`.
 */
export function resolveRetryPolicy(input: RetryPolicyInput | undefined, path: string, violations: FieldViolation[]): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, nonRetryableErrors: [] };
  if (input === undefined) return policy;
  const bad = (field: string, description: string): void => {
    violations.push({ field: `${path}.${field}`, description });
  };

  if (input.maxAttempts !== undefined) {
    if (!Number.isInteger(input.maxAttempts) || input.maxAttempts < 0) bad('max_attempts', 'must be a non-negative integer');
    else policy.maxAttempts = input.maxAttempts;
  }
  const duration = (field: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const ms = parseIsoDuration(text);
    if (ms === undefined) bad(field, `"${quote(text)}" is not an ISO 8601 duration such as "PT1S"`);
    else if (ms <= 0) bad(field, 'must be greater than zero');
    else if (ms > MAX_RETRY_INTERVAL_MS) bad(field, `must be at most ${MAX_RETRY_INTERVAL_MS / 86_400_000} days`);
    else return ms;
    return fallback;
  };
  policy.initialIntervalMs = duration('initial_interval', input.initialInterval, policy.initialIntervalMs);
  policy.maxIntervalMs = duration('max_interval', input.maxInterval, policy.maxIntervalMs);
  if (policy.maxIntervalMs < policy.initialIntervalMs) bad('max_interval', 'must not be shorter than initial_interval');
  if (input.backoffCoefficient !== undefined) {
    if (!Number.isFinite(input.backoffCoefficient) || input.backoffCoefficient < 1) bad('backoff_coefficient', 'must be at least 1.0');
    else policy.backoffCoefficient = input.backoffCoefficient;
  }
  if (input.jitter !== undefined) policy.jitter = input.jitter;
  if (input.nonRetryableErrors !== undefined) {
    if (input.nonRetryableErrors.length > MAX_NON_RETRYABLE_ERRORS)
      bad('non_retryable_errors', `must list at most ${MAX_NON_RETRYABLE_ERRORS} error types`);
    input.nonRetryableErrors.slice(0, MAX_NON_RETRYABLE_ERRORS).forEach((entry, i) => {
      const problem = errorTypeProblem(entry);
      if (problem !== undefined) bad(`non_retryable_errors[${i}]`, problem);
    });
    policy.nonRetryableErrors = [...input.nonRetryableErrors];
  }
  if (input.onExhaustion !== undefined) policy.onExhaustion = input.onExhaustion;
  return policy;
}

/** Whether `policy` is exactly the default (a constant of the specification, not a setting). */
export function isDefaultRetryPolicy(policy: RetryPolicy): boolean {
  const d = DEFAULT_RETRY_POLICY;
  return (
    policy === d ||
    (policy.maxAttempts === d.maxAttempts &&
      policy.initialIntervalMs === d.initialIntervalMs &&
      policy.backoffCoefficient === d.backoffCoefficient &&
      policy.maxIntervalMs === d.maxIntervalMs &&
      policy.jitter === d.jitter &&
      policy.nonRetryableErrors.length === 0 &&
      policy.onExhaustion === d.onExhaustion)
  );
}

/** The policy in its wire form, durations as ISO 8601 strings. */
export function describeRetryPolicy(policy: RetryPolicy): Required<RetryPolicyInput> {
  return {
    maxAttempts: policy.maxAttempts,
    initialInterval: formatIsoDuration(policy.initialIntervalMs),
    backoffCoefficient: policy.backoffCoefficient,
    maxInterval: formatIsoDuration(policy.maxIntervalMs),
    jitter: policy.jitter,
    nonRetryableErrors: [...policy.nonRetryableErrors],
    onExhaustion: policy.onExhaustion,
  };
}

/**
 * Delay before the retry that follows failed attempt `attempt` (ojs-retry
 * sections 3.3, 3.5 and 5): exponential from initial_interval, capped at
 * max_interval, multiplied by a factor in [0.5, 1.5) when jitter is on, and
 * capped again. `random` returns a number in [0, 1).
 */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const retryNumber = Math.max(1, attempt);
  const raw = policy.initialIntervalMs * policy.backoffCoefficient ** (retryNumber - 1);
  const capped = Math.min(raw, policy.maxIntervalMs);
  if (!policy.jitter) return Math.round(capped);
  const jittered = capped * (0.5 + random());
  return Math.round(Math.max(0, Math.min(jittered, policy.maxIntervalMs)));
}

/** Exact match, or prefix match for entries ending in ".*" (ojs-retry section 6.2). */
export function isNonRetryable(policy: RetryPolicy, errorType: string): boolean {
  return policy.nonRetryableErrors.some((entry) => (entry.endsWith('.*') ? errorType.startsWith(entry.slice(0, -1)) : entry === errorType));
}
