import type { FieldViolation } from '../../../src/domain/errors';
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  isNonRetryable,
  resolveRetryPolicy,
  type RetryPolicy,
  type RetryPolicyInput,
} from '../../../src/domain/retry-policy';

function resolve(input: RetryPolicyInput | undefined): { policy: RetryPolicy; violations: FieldViolation[] } {
  const violations: FieldViolation[] = [];
  return { policy: resolveRetryPolicy(input, 'retry', violations), violations };
}

describe('retry policy', () => {
  it('applies the OJS default policy when none is given', () => {
    expect(resolve(undefined).policy).toEqual({
      maxAttempts: 3,
      initialIntervalMs: 1_000,
      backoffCoefficient: 2,
      maxIntervalMs: 300_000,
      jitter: true,
      nonRetryableErrors: [],
      onExhaustion: 'discard',
    });
  });

  it('merges a partial policy with the defaults', () => {
    const { policy, violations } = resolve({ maxAttempts: 10, onExhaustion: 'dead_letter' });
    expect(violations).toEqual([]);
    expect(policy).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 10, onExhaustion: 'dead_letter' });
  });

  it.each<[RetryPolicyInput, string]>([
    [{ maxAttempts: -1 }, 'retry.max_attempts'],
    [{ maxAttempts: 1.5 }, 'retry.max_attempts'],
    [{ initialInterval: '1s' }, 'retry.initial_interval'],
    [{ initialInterval: 'PT0S' }, 'retry.initial_interval'],
    [{ backoffCoefficient: 0.9 }, 'retry.backoff_coefficient'],
    [{ backoffCoefficient: Number.NaN }, 'retry.backoff_coefficient'],
    [{ maxInterval: 'forever' }, 'retry.max_interval'],
    [{ initialInterval: 'PT10M', maxInterval: 'PT1M' }, 'retry.max_interval'],
    [{ nonRetryableErrors: [''] }, 'retry.non_retryable_errors[0]'],
  ])('refuses %j naming %s', (input, field) => {
    expect(resolve(input).violations.map((v) => v.field)).toEqual([field]);
  });

  it('grows the delay exponentially and caps it at max_interval', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, jitter: false };
    const delays = [1, 2, 3, 4, 5, 9, 10, 11].map((attempt) => backoffDelayMs(policy, attempt, Math.random));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 256_000, 300_000, 300_000]);
  });

  it('keeps jittered delays within [0.5, 1.5) of the capped delay, and never above max_interval', () => {
    const policy = { ...DEFAULT_RETRY_POLICY };
    expect(backoffDelayMs(policy, 2, () => 0)).toBe(1_000);
    expect(backoffDelayMs(policy, 2, () => 0.5)).toBe(2_000);
    expect(backoffDelayMs(policy, 2, () => 0.999)).toBe(2_998);
    expect(backoffDelayMs(policy, 10, () => 0.999)).toBe(300_000);
    expect(backoffDelayMs(policy, 10, () => 0)).toBe(150_000);
  });

  it('matches non-retryable errors exactly or by ".*" prefix', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, nonRetryableErrors: ['validation.payload_invalid', 'auth.*'] };
    expect(isNonRetryable(policy, 'validation.payload_invalid')).toBe(true);
    expect(isNonRetryable(policy, 'validation.schema_error')).toBe(false);
    expect(isNonRetryable(policy, 'auth.token_expired')).toBe(true);
    expect(isNonRetryable(policy, 'auth')).toBe(false);
    expect(isNonRetryable(policy, 'external.auth.failure')).toBe(false);
  });
});
