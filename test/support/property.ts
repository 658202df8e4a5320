import type { Parameters } from 'fast-check';

/**
 * fast-check settings shared by the property tests: bounded runs for CI,
 * more with OJS_PROPERTY_RUNS, and a failure's seed replayed with
 * OJS_PROPERTY_SEED=<seed> (fast-check prints it with the counterexample).
 */
export function propertyParameters<T>(defaultRuns = 100): Parameters<T> {
  const seed = process.env['OJS_PROPERTY_SEED'];
  const runs = Number(process.env['OJS_PROPERTY_RUNS'] ?? defaultRuns);
  return { numRuns: runs, ...(seed === undefined ? {} : { seed: Number(seed) }) };
}
