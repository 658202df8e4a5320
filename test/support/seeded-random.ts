/**
 * A small seeded generator (mulberry32): the same seed gives the same
 * sequence of numbers in [0, 1), so a run drawn from it can be replayed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A seed from the environment variable `name` (to replay a run), or a fresh random one. */
export function seedFromEnv(name: string): number {
  const value = process.env[name];
  if (value === undefined || value === '') return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new Error(`${name} must be an integer seed, not ${JSON.stringify(value)}`);
  return seed;
}
