import { randomUUID } from 'node:crypto';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { ServerProcess } from '../../tools/server-process';
import { enqueue, jobSpec } from '../support/jobs';
import { auditRedis } from '../support/store-audit';
import { connectTo, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { eventually } from '../support/waiting';

const WORKERS = 50;
const SHUTDOWN_TIMEOUT_MS = 2_000;
/** Far longer than the shutdown timeout: a Redis that answers nothing holds each call this long. */
const COMMAND_TIMEOUT_MS = 120_000;
/** What the exit may take beyond the shutdown timeout on a loaded machine; far less than the command timeout. */
const EXIT_SLACK_MS = 15_000;

/** A call's outcome, settled at once: its failure must not crash the run before the test looks at it. */
function settled<T>(call: Promise<T>): Promise<{ answer: T } | { error: unknown }> {
  return call.then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error }),
  );
}

/**
 * A graceful stop always ends, within its timeout, whatever Redis does
 * meanwhile: a server with open Beat and Fetch streams and jobs in flight
 * is stopped while a write waits on Redis (so the drain lasts the whole
 * timeout and every background pass is waiting too), and Redis then dies or
 * stops answering. The jobs in flight are still in Redis afterwards, active
 * under leases that expire (how they are recovered), and the store audit is
 * clean.
 */
describe('a graceful stop while Redis goes away', () => {
  let redis: RedisServerProcess | undefined;
  let server: ServerProcess | undefined;
  let clients: Clients | undefined;
  const streams: { close(): void }[] = [];
  const prefix = testPrefix();

  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    clients?.channel.close();
    await server?.kill();
    await redis?.destroy();
  });

  it.each([
    ['stops answering (SIGSTOP)', 'SIGSTOP'],
    ['dies (SIGKILL)', 'SIGKILL'],
  ] as const)(
    'exits within its shutdown timeout when Redis %s during the drain',
    async (_name, how) => {
      // Append-only, so that what a killed Redis acknowledged can be read after its restart.
      redis = await RedisServerProcess.start({ appendonly: true });
      server = await ServerProcess.start({ OJS_BACKEND: 'redis', REDIS_URL: redis.url, OJS_REDIS_PREFIX: prefix }, [
        '--shutdown-timeout',
        `${SHUTDOWN_TIMEOUT_MS}ms`,
        '--redis-command-timeout',
        `${COMMAND_TIMEOUT_MS}ms`,
      ]);
      clients = connectTo(server.address);
      const queue = `q-${randomUUID().slice(0, 8)}`;
      const workers = await Promise.all(
        Array.from({ length: WORKERS }, () => TestWorker.register(clients!, { queues: [queue], concurrency: 1 })),
      );
      const fetches = [];
      for (const worker of workers) {
        const beat = worker.openBeat();
        streams.push(beat);
        await beat.beat();
        const fetch = worker.openFetch();
        streams.push(fetch);
        fetches.push(fetch);
      }
      // One job in flight per worker: delivered, never settled.
      const inFlight = await enqueue(clients, ...Array.from({ length: WORKERS }, () => ({ queue })));
      await Promise.all(fetches.map((fetch) => fetch.nextMatching((m) => m.deliveries.length > 0)));

      // Writes wait (reads still answer, so the store stays available): the Enqueue below is in flight
      // through the drain, which therefore lasts the whole timeout, and every background pass waits too.
      await redis.cli('client', 'pause', String(COMMAND_TIMEOUT_MS), 'write');
      const held = settled(clients.jobs.enqueue({ jobs: [jobSpec({ queue: `held-${queue}` })] }));
      await eventually(
        async () => (/blocked_clients:[1-9]/.test(await redis!.cli('info', 'clients')) ? true : undefined),
        () => 'the Enqueue to wait in Redis',
      );
      server.signal('SIGTERM');
      await server.waitForLog((line) => line.msg === 'shutting down', 'that it shuts down');
      if (how === 'SIGSTOP') redis.pause();
      else await redis.stop('SIGKILL');

      // Bounded far below the command timeout: a server that waits on Redis fails the test.
      expect(await server.exitCode(SHUTDOWN_TIMEOUT_MS + EXIT_SLACK_MS)).toBe(0);
      expect(await held).toHaveProperty('error');

      // Redis back: the jobs in flight are still there, active under their leases.
      if (how === 'SIGSTOP') redis.resume();
      else await redis.startAgain();
      await redis.cli('client', 'unpause');
      const store = await RedisJobStore.connect({ url: redis.url, prefix, connectTimeoutMs: 5_000 });
      try {
        const jobs = await store.getJobs(inFlight.map((job) => job.id));
        expect(jobs.map((job) => ({ state: job?.state, hasLease: job?.lease !== undefined }))).toEqual(
          inFlight.map(() => ({ state: 'active', hasLease: true })),
        );
      } finally {
        await store.close();
      }
      expect(await auditRedis(redis.url, prefix)).toEqual([]);
    },
    60_000,
  );
});
