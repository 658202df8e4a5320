import { TIMESTAMP_MAX_MS, TIMESTAMP_MIN_MS } from './limits';

/**
 * Why `ms` (epoch milliseconds, as the contract's timestamps decode) cannot
 * be stored, or undefined. A timestamp the decoder could not represent
 * arrives as NaN.
 */
export function timestampProblem(ms: number): string | undefined {
  if (!Number.isInteger(ms)) return 'is not a representable timestamp';
  if (ms < TIMESTAMP_MIN_MS || ms > TIMESTAMP_MAX_MS) return 'must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z';
  return undefined;
}
