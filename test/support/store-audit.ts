import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { errorText } from './error-text';

/**
 * The store invariant checker after a test: whatever the test did, the
 * stored data must keep every invariant `JobStore.audit()` checks. Audits
 * are atomic (a Lua script on Redis, synchronous on memory), so they may run
 * while servers are live.
 */

/**
 * Runs `audit`, then `stop` whatever it found, then fails with the audit's
 * sentences: a test that leaves broken data fails, and still stops its
 * processes. An audit that cannot run (the store unreachable) fails too.
 */
export async function auditThenStop(what: string, audit: () => Promise<string[]>, stop: () => Promise<unknown>): Promise<void> {
  let problems: string[];
  try {
    problems = await audit();
  } catch (error) {
    problems = [`the audit could not run: ${errorText(error)}`];
  }
  await stop();
  if (problems.length > 0) throw new Error(`the store audit of ${what} found ${problems.length} problem(s):\n${problems.join('\n')}`);
}

/** Audits the data of a deployment on Redis (what every replica with `prefix` shares) through a store of its own. */
export async function auditRedis(url: string, prefix: string): Promise<string[]> {
  const store = await RedisJobStore.connect({ url, prefix, connectTimeoutMs: 5_000 });
  try {
    return await store.audit();
  } finally {
    await store.close();
  }
}
