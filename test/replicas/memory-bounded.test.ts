import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Delivery } from '../../gen/ojs/server/v1/worker_service';
import { enqueue } from '../support/jobs';
import { BeatingWorker } from './beating-worker';
import { ReplicaSet } from './replica-set';
import { eventually } from '../support/waiting';

/**
 * Memory stays bounded on Redis: once jobs are finished and past their
 * retention, and workers are dead, the background passes of the replicas
 * leave nothing of them behind: no job hash, no index entry (ready, due,
 * expiry, lease, timeout, listing), no worker record, no counts or index
 * entry of a queue left without jobs. What remains is the FIFO sequence
 * counter, the event log (bounded by its length) and its position
 * counter, and the throughput
 * minutes, each expiring on its own. (The job store contract,
 * run on Redis too, covers pruning by age and by count one call at a time;
 * this is the whole server, with every kind of ending.)
 */
describe('memory on Redis', () => {
  let set: ReplicaSet;
  let redis: Redis;
  const workers: BeatingWorker[] = [];

  beforeAll(async () => {
    const retention = ['--retention-completed', '100ms', '--retention-cancelled', '100ms', '--retention-discarded', '100ms'];
    const timings = ['--heartbeat-interval', '200ms', '--heartbeat-timeout', '1s', '--promote-interval', '20ms', '--reap-interval', '50ms'];
    set = await ReplicaSet.start(2, { redisUrl: process.env['OJS_TEST_REDIS_URL']!, args: [...retention, ...timings] });
    redis = new Redis(process.env['OJS_TEST_REDIS_URL']!);
  });
  afterAll(async () => {
    for (const worker of workers) worker.silence();
    redis?.disconnect();
    await set?.stopAll();
  });

  /** Every key of the deployment, without its prefix. */
  async function keys(): Promise<string[]> {
    const found: string[] = [];
    // The prefix holds braces and letters only; a glob needs no escaping for it.
    for await (const batch of redis.scanStream({ match: `${set.prefix}:*`, count: 1_000 }) as AsyncIterable<string[]>) found.push(...batch);
    return found.map((key) => key.slice(set.prefix.length + 1)).toSorted();
  }

  it('keeps nothing of finished jobs past retention or of dead workers', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const unserved = `q-${randomUUID().slice(0, 8)}`;
    const [a, b] = [set.at(0), set.at(1)];

    // A worker that dies holding jobs: they are recovered, then completed by the next one.
    const dying = await BeatingWorker.start(a.clients, { queues: [queue], decide: () => 'hold' });
    workers.push(dying);
    await enqueue(b.clients, ...Array.from({ length: 10 }, () => ({ queue })));
    await dying.until(
      () => dying.confirmedJobIds().length === 10,
      () => 'the dying worker to confirm its jobs',
    );
    dying.silence();

    // Completed, discarded by a failure, cancelled, and expired (enqueue TTL) jobs.
    const decide = (d: Delivery) => (d.job!.args[0] === 'fail' ? 'fail' : 'ack');
    const worker = await BeatingWorker.start(b.clients, { queues: [queue], decide });
    workers.push(worker);
    await enqueue(a.clients, ...Array.from({ length: 100 }, () => ({ queue })));
    await enqueue(a.clients, ...Array.from({ length: 50 }, () => ({ queue, args: ['fail'], retry: { maxAttempts: 1 } })));
    const later = await enqueue(a.clients, ...Array.from({ length: 25 }, () => ({ queue, scheduledAt: new Date(Date.now() + 3_600_000) })));
    for (const job of later) await b.clients.jobs.cancelJob({ jobId: job.id });
    await enqueue(b.clients, ...Array.from({ length: 25 }, () => ({ queue: unserved, enqueueTtl: 1 })));
    await worker.until(
      () => worker.acked.length + worker.failed.length === 160,
      () => `160 settlements, got ${worker.acked.length + worker.failed.length}`,
    );
    worker.silence();

    // Jobs, workers and queues without jobs alike go; what stays is the FIFO sequence, the event log (and its position) and the throughput minutes.
    const bookkeeping = ['event-position', 'events', 'seq'];
    const isThroughput = (key: string) => key.startsWith('stats:');
    let last: string[] = [];
    await eventually(
      async () => {
        last = await keys();
        return last.filter((key) => !isThroughput(key)).join() === bookkeeping.join() ? last : undefined;
      },
      () => `only ${bookkeeping.join(', ')} to remain, still: ${last.slice(0, 20).join(', ')}${last.length > 20 ? ', ...' : ''}`,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    for (const key of last.filter(isThroughput)) expect(await redis.pttl(`${set.prefix}:${key}`)).toBeGreaterThan(0);
    // Nothing lists the queues any more: each went with its last job.
    expect(await a.clients.operator.listQueues({})).toEqual({ queues: [], nextPageToken: '' });
  });
});
