/**
 * The rule for a deployment's Redis key prefix, read by the configuration
 * and by the Redis store's keys (src/store/redis/keys.ts), which both refuse
 * a prefix that breaks it.
 */

/** Why `prefix` cannot be a deployment's key prefix, or undefined when it can. */
export function redisPrefixProblem(prefix: string): string | undefined {
  // Every key of a deployment in one cluster slot: each script touches that slot alone.
  if (!/\{[^{}]+\}/.test(prefix)) return 'must contain a {hash tag}';
  // oxlint-disable-next-line no-control-regex -- control characters are what it refuses
  if (/[\x00-\x1f\x7f]/.test(prefix)) return 'must not hold a control character (the key list joins keys with one)';
  return undefined;
}
