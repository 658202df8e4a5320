import { Redis } from 'ioredis';
import { compareCursors, type RecordedFact } from '../../src/domain/event-facts';
import { DEFAULT_EVENT_RETENTION } from '../../src/domain/retention';
import type { JobStore } from '../../src/store/job-store';
import { RedisKeys } from '../../src/store/redis/keys';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { factFollower } from '../support/fact-follower';
import { eventually } from '../support/waiting';
import { StoreHarness, T0 } from './store-harness';

/**
 * What the Redis event log promises beyond the contract, checked on the
 * data with a client of the test's own: the log stays within about its
 * length and the audit says when it does not; cursors follow the facts'
 * own time and keep increasing when a replica's clock is behind; entries
 * the store did not write are skipped, never stalled on; a follower
 * survives a Redis restart; heartbeats are subscribed only while someone
 * listens. Every store a test opens is audited and closed.
 */

let redis: RedisServerProcess;
let client: Redis;
beforeAll(async () => {
  redis = await RedisServerProcess.start({ appendonly: true });
  client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
});
afterAll(async () => {
  client?.disconnect();
  await redis?.destroy();
});

const opened: StoreHarness[] = [];
async function open(maxCount = DEFAULT_EVENT_RETENTION.maxCount): Promise<{ h: StoreHarness; store: JobStore; keys: RedisKeys }> {
  const prefix = testPrefix();
  const store = await RedisJobStore.connect({ url: redis.url, prefix, events: { maxCount, maxAgeMs: DEFAULT_EVENT_RETENTION.maxAgeMs } });
  const h = new StoreHarness(store);
  opened.push(h);
  return { h, store, keys: new RedisKeys(prefix) };
}
afterEach(async () => {
  const problems: string[] = [];
  for (const h of opened.splice(0)) {
    h.close();
    problems.push(...(await h.store.audit()));
    await h.store.close();
  }
  if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
});

describe('the Redis event log', () => {
  it('stays within about its length (whole stream nodes), and the audit reports a log beyond it', async () => {
    const { h, store, keys } = await open(50);
    for (let batch = 0; batch < 3; batch++) await h.enqueue(...Array.from({ length: 100 }, () => ({})));
    const length = await client.xlen(keys.events);
    // Approximate trimming keeps whole nodes of stream-node-max-entries (100) entries.
    expect(length).toBeGreaterThanOrEqual(50);
    expect(length).toBeLessThanOrEqual(150);
    expect(await store.audit()).toEqual([]);
    for (let i = 0; i < 1_200; i++) await client.xadd(keys.events, '*', 'k', 'foreign');
    expect(await store.audit()).toEqual([`the event log holds ${length + 1_200} facts, beyond its length 50`]);
    await client.xtrim(keys.events, 'MAXLEN', 50);
  });

  it("names facts by their own time, and keeps cursors increasing when a replica's clock is behind", async () => {
    const { h, store } = await open();
    await store.enqueue([h.job({}, { now: T0 + 5_000 })]);
    await store.enqueue([h.job({}, { now: T0 })]);
    const { facts } = await store.readFacts({ limit: 10 });
    expect(facts.map((r) => r.fact.at)).toEqual([T0 + 5_000, T0]);
    expect(facts[0]!.cursor).toBe(`${T0 + 5_000}-0`);
    expect(compareCursors(facts[0]!.cursor, facts[1]!.cursor)).toBeLessThan(0);
  });

  it('skips entries it did not write, and followers go past them', async () => {
    const { h, store, keys } = await open();
    const [before] = await h.enqueue({});
    await client.xadd(keys.events, '*', 'k', 'something-else', 'at', '1');
    const following = factFollower(20_000);
    const stop = await store.followFacts((await store.readFacts({ limit: 1 })).facts[0]!.cursor, following.listener);
    await client.xadd(keys.events, '*', 'no', 'kind');
    const [after] = await h.enqueue({});
    await following.until(1);
    stop();
    const jobIds = (recorded: RecordedFact[]) => recorded.map((r) => (r.fact.kind === 'job' ? r.fact.jobId : r.fact.kind));
    expect(jobIds((await store.readFacts({ limit: 10 })).facts)).toEqual([before!.id, after!.id]);
    expect(jobIds(following.got)).toEqual([after!.id]);
  });

  it('delivers to a follower across a Redis restart everything after its cursor, each fact once', async () => {
    const { h, store } = await open();
    await h.enqueue({});
    const [start] = (await store.readFacts({ limit: 1 })).facts;
    const following = factFollower(20_000);
    const stop = await store.followFacts(start!.cursor, following.listener);
    await h.enqueue({}, {});
    await following.until(2);
    await redis.restart();
    // The store reconnects by itself; until then, enqueues fail as unavailable.
    await eventually(
      () => h.enqueue({}, {}).then(() => true),
      () => 'an enqueue after the restart',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await h.enqueue({});
    await following.until(5);
    stop();
    const recorded = (await store.readFacts({ after: start!.cursor, limit: 100 })).facts;
    expect(recorded).toHaveLength(5);
    expect(following.got).toEqual(recorded);
  }, 30_000);

  it('subscribes to heartbeat notices only while someone listens', async () => {
    const { store, keys } = await open();
    const listeners = async () => Number((await client.pubsub('NUMSUB', keys.heartbeats))[1]);
    expect(await listeners()).toBe(0);
    const stop = store.followHeartbeats(() => {});
    await eventually(
      async () => ((await listeners()) === 1 ? true : undefined),
      () => 'the store to subscribe',
    );
    stop();
    await eventually(
      async () => ((await listeners()) === 0 ? true : undefined),
      () => 'the store to unsubscribe',
    );
  });
});

describe('the Redis audit of listings, pauses and throughput', () => {
  it('reports listing entries, paused queues and throughput minutes that a client broke', async () => {
    const { h, store, keys } = await open();
    const [job] = await h.enqueue({});
    const member = `${String(T0).padStart(15, '0')}:${job!.id}`;
    await client.zrem(`${keys.listing}available`, member);
    await client.zadd(`${keys.listing}completed:default`, 0, '000000000000001:ghost');
    await client.hset(`${keys.stats}default:60000`, 'completed', '1');
    await client.sadd(keys.paused, 'idle');
    const problems = await store.audit();
    expect(problems).toEqual(
      expect.arrayContaining([
        `job ${job!.id} is available but not in the listing index available under ${member}`,
        'listing index completed:default lists 000000000000001:ghost, which is no job of it at that time',
        `throughput key ${keys.stats}default:60000 does not expire within 7200000 ms`,
        'queue idle is paused but not in the queue index',
      ]),
    );
    expect(problems).toHaveLength(4);
    await client.zadd(`${keys.listing}available`, 0, member);
    await client.zrem(`${keys.listing}completed:default`, '000000000000001:ghost');
    await client.del(`${keys.stats}default:60000`);
    await client.srem(keys.paused, 'idle');
  });
});
