import { Redis } from 'ioredis';
import { compareCursors, firstLogPosition, type RecordedFact } from '../../src/domain/event-facts';
import { DEFAULT_EVENT_RETENTION } from '../../src/domain/retention';
import type { JobStore } from '../../src/store/job-store';
import { RedisKeys } from '../../src/store/redis/keys';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { factFollower } from '../support/fact-follower';
import { eventually } from '../support/waiting';
import { StoreHarness, T0 } from './store-harness';
import { startRedisWithClient, stopRedisWithClient } from '../support/redis-with-client';

/**
 * What the Redis event log promises beyond the contract, checked on the
 * data with a client of the test's own: one stream entry per script call,
 * holding its facts; the log keeps about its length of facts whatever its
 * entries hold, and the audit says when it does not; pruning by age drops
 * whole entries; positions count facts from the first one's time, never go
 * back when a replica's clock is behind or the position counter is lost,
 * and start beyond every earlier cursor when the log is recreated; entries
 * the store did not write are skipped, never stalled on; a follower
 * survives a Redis restart; heartbeats are subscribed only while someone
 * listens. Every store a test opens is audited and closed.
 */

let redis: RedisServerProcess;
let client: Redis;
beforeAll(async () => {
  ({ redis, client } = await startRedisWithClient({ appendonly: true }));
});
afterAll(() => stopRedisWithClient({ redis, client }));

const opened: StoreHarness[] = [];
async function open(
  maxCount = DEFAULT_EVENT_RETENTION.maxCount,
  prefix = testPrefix(),
): Promise<{ h: StoreHarness; store: JobStore; keys: RedisKeys }> {
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
  it('keeps the facts of one script call in one entry, read back from any of them', async () => {
    const { h, store, keys } = await open();
    const jobs = await h.enqueue({}, {}, {}, {});
    const entries = await client.xrange(keys.events, '-', '+');
    expect(entries).toHaveLength(1);
    const { facts } = await store.readFacts({ limit: 10 });
    expect(entries[0]![0]).toBe(`${facts[0]!.cursor}-4`);
    expect(facts.map((r) => (r.fact.kind === 'job' ? r.fact.jobId : ''))).toEqual(jobs.map((j) => j.id));
    expect((await store.readFacts({ after: facts[1]!.cursor, limit: 1 })).facts).toEqual(facts.slice(2, 3));
  });

  it('keeps about its length of facts, in single or shared entries, and the audit reports a log beyond it', async () => {
    const { h, store, keys } = await open(50);
    for (let batch = 0; batch < 3; batch++) await h.enqueue(...Array.from({ length: 100 }, () => ({})));
    // An entry holding more than the length stays whole: the newest facts are kept, at least the length.
    expect((await store.readFacts({ limit: 1_000 })).facts).toHaveLength(100);
    for (let i = 0; i < 200; i++) await h.enqueue({});
    const held = (await store.readFacts({ limit: 1_000 })).facts.length;
    // Approximate trimming keeps whole stream nodes (stream-node-max-entries, 100 entries).
    expect(held).toBeGreaterThanOrEqual(50);
    expect(held).toBeLessThanOrEqual(150);
    expect(await store.audit()).toEqual([]);
    const wide = await open(DEFAULT_EVENT_RETENTION.maxCount, keys.prefix);
    for (let batch = 0; batch < 4; batch++) await wide.h.enqueue(...Array.from({ length: 1_000 }, () => ({})));
    const logged = (await store.readFacts({ limit: 10_000 })).facts.length;
    expect(await store.audit()).toEqual([`the event log holds ${logged} facts, beyond its length 50`]);
    await client.xtrim(keys.events, 'MAXLEN', 0);
  });

  it('drops whole entries older than the retention age, found by bisecting the log', async () => {
    const { h, store } = await open();
    // Entries larger than a stream node (4 KB) each have a node of their own: approximate trimming is exact for them.
    for (let i = 0; i < 10; i++) await store.enqueue(Array.from({ length: 60 }, () => h.job({}, { now: T0 + i * 1_000 })));
    expect(await store.pruneFacts(T0 + DEFAULT_EVENT_RETENTION.maxAgeMs + 4_500)).toBe(300);
    const { facts } = await store.readFacts({ limit: 1_000 });
    expect(facts.map((r) => r.fact.at)).toEqual(Array.from({ length: 300 }, (_, i) => T0 + (5 + Math.floor(i / 60)) * 1_000));
    expect(await store.pruneFacts(T0 + DEFAULT_EVENT_RETENTION.maxAgeMs + 4_500)).toBe(0);
  });

  it("numbers facts from the first one's time, one after the other whatever a replica's clock says", async () => {
    const { h, store } = await open();
    await store.enqueue([h.job({}, { now: T0 + 5_000 })]);
    await store.enqueue([h.job({}, { now: T0 })]);
    const { facts } = await store.readFacts({ limit: 10 });
    expect(facts.map((r) => r.fact.at)).toEqual([T0 + 5_000, T0]);
    expect(facts.map((r) => r.cursor)).toEqual([firstLogPosition(T0 + 5_000), firstLogPosition(T0 + 5_000) + 1].map(String));
  });

  it('numbers on after the log when its position is lost, and beyond every earlier cursor when the log is recreated', async () => {
    const { h, store, keys } = await open();
    await h.enqueue({}, {});
    await client.del(keys.eventPosition);
    await h.enqueue({});
    const kept = (await store.readFacts({ limit: 10 })).facts.map((r) => r.cursor);
    expect(kept).toEqual([0, 1, 2].map((n) => String(firstLogPosition(T0) + n)));
    await client.del(keys.events, keys.eventPosition);
    await store.enqueue([h.job({}, { now: T0 + 1 })]);
    const { facts, oldest } = await store.readFacts({ limit: 10 });
    expect(facts.map((r) => r.cursor)).toEqual([String(firstLogPosition(T0 + 1))]);
    // An old cursor is older than the log: its reader learns that it missed facts.
    expect(compareCursors(kept.at(-1)!, oldest!)).toBeLessThan(0);
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
    const stop = await store.followHeartbeats(() => {});
    expect(await listeners()).toBe(1);
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
    const [job] = await h.enqueue({ scheduledAt: T0 + 60_000 });
    const member = `${String(T0).padStart(15, '0')}:${job!.id}`;
    await client.zrem(`${keys.listing}scheduled`, member);
    await client.zadd(`${keys.listing}completed:default`, 0, '000000000000001:ghost');
    await client.zadd(`${keys.listing}available`, 0, member);
    await client.zadd(`${keys.listing}active:default`, 0, member);
    await client.hset(`${keys.stats}default:60000`, 'completed', '1');
    await client.sadd(keys.paused, 'idle');
    const problems = await store.audit();
    expect(problems).toEqual(
      expect.arrayContaining([
        `job ${job!.id} is scheduled but not in the listing index scheduled under ${member}`,
        'listing index completed:default lists 000000000000001:ghost, which is no job of it at that time',
        `listing index ${keys.listing}available is not of a job state listed by time`,
        `listing index ${keys.listing}active:default is of active jobs of one queue, which have none`,
        `throughput key ${keys.stats}default:60000 does not expire within 7200000 ms`,
        'queue idle is paused but not in the queue index',
      ]),
    );
    expect(problems).toHaveLength(6);
    await client.zadd(`${keys.listing}scheduled`, 0, member);
    await client.del(`${keys.listing}completed:default`, `${keys.listing}available`, `${keys.listing}active:default`);
    await client.del(`${keys.stats}default:60000`);
    await client.srem(keys.paused, 'idle');
  });
});
