import { Redis } from 'ioredis';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { StoreHarness } from './store-harness';
import { eventually } from '../support/waiting';
import { startRedisWithClient, stopRedisWithClient } from '../support/redis-with-client';

/** A field of an INFO section as a number (0 when absent). */
async function infoNumber(client: Redis, section: string, pattern: RegExp): Promise<number> {
  const match = pattern.exec(await client.info(section));
  return match === null ? 0 : Number(match[1]);
}

/**
 * The probe that decides whether Redis answers asks on a connection of its
 * own: a command connection busy with the replica's own scripts is not a
 * Redis that does not answer. The command connection is held
 * deterministically by CLIENT PAUSE WRITE: the store's next script waits in
 * Redis (every script counts as a write), and a connection's later
 * commands wait behind it, while reads on other connections are answered.
 */
describe('the Redis store probe', () => {
  let redis: RedisServerProcess;
  let client: Redis;
  beforeAll(async () => {
    ({ redis, client } = await startRedisWithClient());
  });
  afterAll(() => stopRedisWithClient({ redis, client }));

  it('keeps the store available while its command connection waits on a script', async () => {
    const store = await RedisJobStore.connect({
      url: redis.url,
      prefix: testPrefix(),
      pingIntervalMs: 20,
      pingTimeoutMs: 300,
      commandTimeoutMs: 30_000,
    });
    const availability: boolean[] = [];
    store.subscribe((signal) => {
      if (signal.kind === 'availability') availability.push(signal.isAvailable);
    });
    const harness = new StoreHarness(store);
    try {
      await client.call('client', 'pause', '30000', 'write');
      let isEnqueued = false;
      const enqueued = store.enqueue([harness.job()]).then((outcome) => {
        isEnqueued = true;
        return outcome;
      });
      enqueued.catch(() => {}); // Awaited below; a failure before then must not crash the run.
      // The script has reached Redis and waits there: the command connection is busy.
      await eventually(
        async () => ((await infoNumber(client, 'clients', /blocked_clients:(\d+)/)) >= 1 ? true : undefined),
        () => 'the store script to wait in Redis',
      );
      const before = await infoNumber(client, 'commandstats', /cmdstat_exists:calls=(\d+)/);
      // Probes answered meanwhile, each in far less than its timeout.
      await eventually(
        async () => ((await infoNumber(client, 'commandstats', /cmdstat_exists:calls=(\d+)/)) >= before + 5 ? true : undefined),
        () => 'five probes answered while the command connection waits',
      );
      expect(isEnqueued).toBe(false);
      expect(availability).toEqual([]);

      await client.call('client', 'unpause');
      expect(await enqueued).toHaveLength(1);
      expect(availability).toEqual([]);
    } finally {
      await client.call('client', 'unpause');
      await store.close();
    }
  });

  it('closes the probe connection with the store', async () => {
    const connectedClients = (): Promise<number> => infoNumber(client, 'clients', /connected_clients:(\d+)/);
    const onlyTheTestClient = async (): Promise<true | undefined> => ((await connectedClients()) === 1 ? true : undefined);
    // Redis sees the connections of stores closed before go away on its own time.
    await eventually(onlyTheTestClient, () => 'the connections of earlier stores to be closed');
    const store = await RedisJobStore.connect({ url: redis.url, prefix: testPrefix() });
    try {
      // The command, subscriber and probe connections.
      expect(await connectedClients()).toBe(4);
    } finally {
      await store.close();
    }
    await eventually(onlyTheTestClient, () => 'every connection of the store to be closed');
  });
});
