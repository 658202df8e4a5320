import { randomUUID } from 'node:crypto';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { EventWatch, typesAndSubjects } from '../support/event-watch';
import { enqueueOne, getJob } from '../support/jobs';
import type { Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { within } from '../support/waiting';
import { ReplicaSet, type Replica } from './replica-set';

/**
 * The operator RPCs across three server processes on one Redis: events,
 * pauses and result waits reach every replica, whichever one made the
 * change. (dist/ must be fresh: `npm run build`, which `npm test` runs first.)
 */

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (deliveries: readonly Delivery[]): string[] => deliveries.map((d) => d.job!.id);
const redisUrl = (): string => process.env['OJS_TEST_REDIS_URL']!;

describe('events across replicas', () => {
  let set: ReplicaSet;
  const open: { close(): void }[] = [];

  beforeAll(async () => {
    // A short keepalive: a watcher's first message tells that its replica follows the log for it.
    set = await ReplicaSet.start(3, { redisUrl: redisUrl(), args: ['--stream-keepalive', '100ms'] });
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(() => set?.stopAll());

  function watch(clients: Clients, request: Parameters<typeof EventWatch.open>[1]): EventWatch {
    const opened = EventWatch.open(clients, request);
    open.push(opened);
    return opened;
  }

  it('tells a watcher on one replica of the changes made through the others', async () => {
    const [a, b, c] = set.replicas as [Replica, Replica, Replica];
    const queue = newQueue();
    const watcher = await watch(b.clients, { queues: [queue] }).opened();
    const job = await enqueueOne(a.clients, { queue });
    await c.clients.jobs.cancelJob({ jobId: job.id });
    const got = await watcher.until(
      (e) => e.length >= 2,
      () => 'two events',
    );
    expect(typesAndSubjects(got)).toEqual([
      ['job.enqueued', job.id],
      ['job.cancelled', job.id],
    ]);
  });

  it('gives a watcher that resumes on another replica every event it missed, none twice, while changes go on', async () => {
    const [a, b, c] = set.replicas as [Replica, Replica, Replica];
    const queue = newQueue();
    const witness = await watch(a.clients, { queues: [queue] }).opened();
    const first = await watch(b.clients, { queues: [queue] }).opened();
    // Producers on every replica, while the watcher leaves B and comes back on C.
    const jobsPerReplica = 20;
    const produce = Promise.all(
      set.replicas.map(async (replica) => {
        for (let i = 0; i < jobsPerReplica; i++) {
          const job = await enqueueOne(replica.clients, { queue });
          await replica.clients.jobs.cancelJob({ jobId: job.id });
        }
      }),
    );
    const seen = await first.until(
      (e) => e.length >= 15,
      () => '15 events',
    );
    first.close();
    const resumed = watch(c.clients, { queues: [queue], after: seen.at(-1)!.id });
    await produce;
    const total = 2 * jobsPerReplica * set.replicas.length;
    const all = await witness.until(
      (e) => e.length >= total,
      () => `${total} events`,
    );
    const rest = await resumed.until(
      (e) => e.length >= total - seen.length,
      () => `the ${total - seen.length} events after the ${seen.length}th`,
    );
    expect(new Set(all.map((e) => e.id)).size).toBe(total);
    expect(seen.map((e) => e.id)).toEqual(all.slice(0, seen.length).map((e) => e.id));
    expect(rest.map((e) => e.id)).toEqual(all.slice(seen.length).map((e) => e.id));
  });
});

describe('pauses and result waits across replicas', () => {
  let set: ReplicaSet;
  const open: { close(): void }[] = [];

  beforeAll(async () => {
    // Keepalives (which also make a Fetch stream look for work) are a minute
    // apart: what reaches a stream promptly was carried by a signal.
    set = await ReplicaSet.start(3, { redisUrl: redisUrl(), args: ['--stream-keepalive', '60s'] });
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(() => set?.stopAll());

  /** A worker registered at `replica` with its Fetch stream there, idle after taking a first job of its last queue. */
  async function idleWorker(replica: Replica, queues: string[]) {
    const worker = await TestWorker.register(replica.clients, { queues });
    const fetch = worker.openFetch();
    open.push(fetch);
    const probe = await enqueueOne(replica.clients, { queue: queues.at(-1)! });
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([probe.id]);
    return { worker, fetch };
  }

  it('stops deliveries on every replica when one pauses a queue, and restarts them at once when another resumes it', async () => {
    const [a, b, c] = set.replicas as [Replica, Replica, Replica];
    const [paused, other] = [newQueue(), newQueue()];
    const { fetch } = await idleWorker(b, [paused, other]);
    await a.clients.operator.pauseQueue({ queue: paused });
    const held = await enqueueOne(c.clients, { queue: paused });
    const free = await enqueueOne(c.clients, { queue: other });
    // Enqueued first and of the worker's first queue, the held job would have come first (or with it).
    expect(idsOf((await within(fetch.nextMatching(hasDeliveries), 10_000, 'the job of the other queue')).deliveries)).toEqual([free.id]);
    const listed = (await b.clients.operator.listQueues({ pageSize: 1_000 })).queues.find((q) => q.name === paused);
    expect(listed).toMatchObject({ paused: true, available: 1 });

    await c.clients.operator.resumeQueue({ queue: paused });
    const resumed = await within(fetch.nextMatching(hasDeliveries), 10_000, 'the held job after the resume');
    expect(idsOf(resumed.deliveries)).toEqual([held.id]);
  });

  it('answers a result waiter on one replica when a worker on another acks', async () => {
    const [a, , c] = set.replicas as [Replica, Replica, Replica];
    const queue = newQueue();
    const worker = await TestWorker.register(a.clients, { queues: [queue] });
    const fetch = worker.openFetch();
    open.push(fetch);
    const job = await enqueueOne(c.clients, { queue });
    const delivery = (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
    const waiting = c.clients.jobs.waitForJob({ jobId: job.id, maxWait: { seconds: 60, nanos: 0 } });
    waiting.catch(() => {}); // Surfaced below.
    // A short wait sent after the long one answers once its deadline passes: by then the long one waits too.
    const short = await c.clients.jobs.waitForJob({ jobId: job.id, maxWait: { seconds: 0, nanos: 200e6 } });
    expect(short).toMatchObject({ finished: false, job: { state: JobState.JOB_STATE_ACTIVE } });
    await worker.ack(delivery, { total: 42 });
    expect(await within(waiting, 10_000, 'the waiter on another replica')).toMatchObject({
      finished: true,
      job: { id: job.id, state: JobState.JOB_STATE_COMPLETED, result: { total: 42 } },
    });
    expect((await getJob(c.clients, job.id)).state).toBe(JobState.JOB_STATE_COMPLETED);
  });
});
