import { randomUUID } from 'node:crypto';
import { JobState, type Job } from '../../gen/ojs/server/v1/job';
import {
  WorkerState,
  type BeatRequest,
  type BeatResponse,
  type Delivery,
  type FetchResponse,
} from '../../gen/ojs/server/v1/worker_service';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { RequestStream, StreamReader } from '../support/streams';
import { TestWorker } from '../support/test-worker';
import { BeatingWorker, type BeatingWorkerOptions } from './beating-worker';
import { ReplicaSet, type Replica } from './replica-set';
import { Progress, within } from '../support/waiting';

/**
 * Three server processes on one Redis and key prefix: one deployment.
 * Whatever replica a client talks to, the others hear of it through Redis.
 * (dist/ must be fresh: `npm run build`, which `npm test` runs first.)
 */

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;
const idsOf = (deliveries: readonly Delivery[]): string[] => deliveries.map((d) => d.job!.id);

/** How many times each job id occurs among `deliveries`. */
function countById(deliveries: readonly Delivery[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of idsOf(deliveries)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('signals between replicas', () => {
  let set: ReplicaSet;
  const streams: { close(): void }[] = [];

  beforeAll(async () => {
    // Keepalives (which also make a Fetch stream look for work) are a minute
    // apart, and nobody dies within a test: what reaches a stream promptly
    // was carried by a signal.
    set = await ReplicaSet.start(3, {
      redisUrl: process.env['OJS_TEST_REDIS_URL']!,
      args: ['--stream-keepalive', '60s', '--heartbeat-interval', '1s', '--heartbeat-timeout', '10s'],
    });
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => set?.stopAll());

  /** A worker registered at `replica` with its Fetch stream there, idle after taking one job. */
  async function idleFetchingWorker(replica: Replica, queue: string) {
    const worker = await TestWorker.register(replica.clients, { queues: [queue], concurrency: 10 });
    const fetch = worker.openFetch();
    streams.push(fetch);
    // Its first delivery shows the stream is open; after it the stream waits for a wake.
    const probe = await enqueueOne(replica.clients, { queue });
    expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([probe.id]);
    return { worker, fetch };
  }

  /**
   * A Beat stream of the worker at `replica`, bound to the worker by a first
   * beat (a replica learns whose stream it is from its first message).
   */
  async function boundBeat(replica: Replica, workerId: string): Promise<StreamReader<BeatResponse>> {
    const requests = new RequestStream<BeatRequest>();
    const abort = new AbortController();
    const responses = new StreamReader(replica.clients.workers.beat(requests.queue, { signal: abort.signal }), abort);
    streams.push(responses);
    requests.send({ workerId, state: WorkerState.WORKER_STATE_RUNNING, activeJobs: 0, activeJobIds: [], sequence: 1 });
    expect(await responses.next()).toMatchObject({ inReplyTo: 1 });
    return responses;
  }

  it('delivers a job enqueued through one replica to a worker waiting on another', async () => {
    const [a, b] = [set.at(0), set.at(1)];
    const queue = newQueue();
    const { fetch } = await idleFetchingWorker(b, queue);
    const job = await enqueueOne(a.clients, { queue });
    const delivered = await within(
      fetch.nextMatching(hasDeliveries),
      10_000,
      'the job enqueued through one replica at the Fetch stream on another',
    );
    expect(idsOf(delivered.deliveries)).toEqual([job.id]);
  });

  it('pushes a directive given to one replica at once on the Beat stream the worker holds on another', async () => {
    const [a, c] = [set.at(0), set.at(2)];
    const worker = await TestWorker.register(c.clients, { queues: [newQueue()] });
    const beat = await boundBeat(c, worker.workerId);
    await a.clients.operator.setWorkerState({
      target: { $case: 'workerId', value: worker.workerId },
      state: WorkerState.WORKER_STATE_QUIET,
    });
    // The worker has sent nothing since: the next message is a push (in_reply_to 0), not a reply.
    const push = await within(beat.next(), 10_000, 'the directive on the Beat stream');
    expect(push).toMatchObject({ inReplyTo: 0, state: WorkerState.WORKER_STATE_QUIET, cancelledJobIds: [] });
  });

  it('tells the worker on its Beat stream of a cancellation made through any replica', async () => {
    const queue = newQueue();
    // Fetch on one replica, Beat on another, and the cancellations come through each of the three.
    const { worker, fetch } = await idleFetchingWorker(set.at(1), queue);
    const beat = await boundBeat(set.at(2), worker.workerId);
    for (const replica of set.replicas) {
      const job = await enqueueOne(replica.clients, { queue });
      expect(idsOf((await fetch.nextMatching(hasDeliveries)).deliveries)).toEqual([job.id]);
      await replica.clients.jobs.cancelJob({ jobId: job.id });
      const push = await within(beat.next(), 10_000, `the cancellation made through ${replica.name}`);
      expect(push).toMatchObject({ inReplyTo: 0, cancelledJobIds: [job.id] });
    }
  });
});

describe('background work on every replica', () => {
  let set: ReplicaSet;
  const workers: BeatingWorker[] = [];

  beforeAll(async () => {
    // Short protocol timings so that deaths, lapses and promotions happen
    // within a test; every replica runs every background loop.
    const protocol = ['--heartbeat-interval', '200ms', '--heartbeat-timeout', '1s'];
    const loops = ['--promote-interval', '20ms', '--reap-interval', '50ms', '--stream-keepalive', '60s'];
    set = await ReplicaSet.start(3, { redisUrl: process.env['OJS_TEST_REDIS_URL']!, args: [...protocol, ...loops] });
  });
  afterEach(() => {
    for (const worker of workers.splice(0)) worker.silence();
  });
  afterAll(() => set?.stopAll());

  async function startWorker(replica: Replica, options: BeatingWorkerOptions): Promise<BeatingWorker> {
    const worker = await BeatingWorker.start(replica.clients, options);
    workers.push(worker);
    return worker;
  }

  /** The job as any replica reports it. */
  const jobAt = (replica: Replica, id: string): Promise<Job> => getJob(replica.clients, id);

  it('promotes due retryable and scheduled jobs exactly once while three replicas race to', async () => {
    const queue = newQueue();
    const retrying = { maxAttempts: 2, initialInterval: 'PT0.3S', jitter: false };
    // One worker per replica; each fails first attempts of retrying jobs and completes the rest.
    const decide = (d: Delivery) => (d.job!.args[0] === 'retry' && d.job!.attempt === 1 ? 'fail' : 'ack');
    const progress = new Progress();
    const pool = await Promise.all(set.replicas.map((r) => startWorker(r, { queues: [queue], decide, concurrency: 500, progress })));
    const count = 150;
    const retried = await enqueue(set.at(0).clients, ...Array.from({ length: count }, () => ({ queue, args: ['retry'], retry: retrying })));
    // Scheduled together, so that they all fall due in the same promotion pass of some replica.
    const scheduledAt = new Date(Date.now() + 300);
    const scheduled = await enqueue(
      set.at(1).clients,
      ...Array.from({ length: count }, () => ({ queue, args: ['scheduled'], scheduledAt })),
    );

    const all = () => pool.flatMap((w) => w.deliveries);
    const acked = () => new Set(pool.flatMap((w) => idsOf(w.acked)));
    await progress.until(
      () => acked().size === 2 * count,
      () => `${2 * count} completions, got ${acked().size} from ${all().length} deliveries`,
    );
    // A retried job came twice (attempts 1 and 2), a scheduled one once: a job promoted twice would have come again.
    const counts = countById(all());
    expect(retried.map((j) => counts.get(j.id))).toEqual(retried.map(() => 2));
    expect(scheduled.map((j) => counts.get(j.id))).toEqual(scheduled.map(() => 1));
    expect(pool.flatMap((w) => w.refused)).toEqual([]);
    const { queues } = await set.at(2).clients.operator.listQueues({});
    expect(queues.find((q) => q.name === queue)).toMatchObject({
      completed: 2 * count,
      available: 0,
      active: 0,
      retryable: 0,
      scheduled: 0,
    });
  });

  it("recovers a dead worker's jobs exactly once, spending one attempt", async () => {
    const queue = newQueue();
    const dying = await startWorker(set.at(0), { queues: [queue], decide: () => 'hold' });
    const jobs = await enqueue(set.at(1).clients, ...Array.from({ length: 20 }, () => ({ queue })));
    // Confirmed by a beat: so the jobs count as the worker's, and its death as a failed attempt.
    await dying.until(
      () => dying.confirmedJobIds().length === jobs.length,
      () => `the worker to confirm ${jobs.length} jobs`,
    );
    dying.silence();
    // Registered only now, so the jobs can reach it only through the recovery.
    const survivor = await startWorker(set.at(2), { queues: [queue] });
    await survivor.until(
      () => survivor.acked.length === jobs.length,
      () => `${jobs.length} recovered jobs completed, got ${survivor.acked.length}`,
    );
    expect(countById(survivor.deliveries)).toEqual(new Map(jobs.map((j) => [j.id, 1])));
    // One failed attempt (worker_death) each: a second recovery would have recorded another.
    for (const { job } of survivor.deliveries) {
      expect(job).toMatchObject({ attempt: 2, errors: [expect.objectContaining({ type: 'worker_death', attempt: 1 })] });
    }
    const declaredDead = (line: { msg: string; workerId?: unknown }) =>
      line.msg === 'worker declared dead; its jobs were recovered' && line.workerId === dying.workerId;
    await set.waitForLog(declaredDead, `the death of ${dying.workerId}`);
    expect(set.logs().filter(declaredDead)).toHaveLength(1);
  });

  it('reclaims a lapsed reservation exactly once', async () => {
    const queue = newQueue();
    // The worker stays alive but never lists its first attempts: their 1 s reservation lapses.
    // (It is no longer than the confirmation window, the 1 s heartbeat timeout, so the lapse is
    // a visibility timeout, a failed attempt, rather than an unconfirmed delivery given back.)
    const decide = (d: Delivery) => (d.job!.attempt === 1 ? 'forget' : 'ack');
    const worker = await startWorker(set.at(1), { queues: [queue], decide });
    const retry = { maxAttempts: 2, initialInterval: 'PT0.1S', jitter: false };
    const jobs = await enqueue(set.at(0).clients, ...Array.from({ length: 20 }, () => ({ queue, visibilityTimeout: 1, retry })));
    await worker.until(
      () => worker.acked.length === jobs.length,
      () => `${jobs.length} second attempts completed, got ${worker.acked.length}`,
    );
    expect(countById(worker.deliveries)).toEqual(new Map(jobs.map((j) => [j.id, 2])));
    for (const { job } of worker.acked) {
      expect(job).toMatchObject({ attempt: 2, errors: [expect.objectContaining({ type: 'visibility_timeout', attempt: 1 })] });
    }
  });

  it('discards jobs past their enqueue TTL exactly once', async () => {
    const queue = newQueue();
    const abort = new AbortController();
    const watch = set.at(2).clients.operator.watchEvents({ types: ['job.ttl_expired'], queues: [queue] }, { signal: abort.signal });
    const events = new StreamReader(watch, abort);
    const jobs = await enqueue(set.at(0).clients, ...Array.from({ length: 50 }, () => ({ queue, enqueueTtl: 1 })));
    // One event per discard, from whichever replica made it: a job discarded twice would repeat.
    const seen: string[] = [];
    const collect = async (): Promise<void> => {
      while (new Set(seen).size < jobs.length) seen.push((await events.nextMatching((m) => m.event !== undefined)).event!.jobId);
    };
    await within(collect(), 10_000, `${jobs.length} ttl_expired events`).finally(() => events.close());
    expect(seen.toSorted()).toEqual(jobs.map((j) => j.id).toSorted());
    for (const job of jobs) {
      expect(await jobAt(set.at(1), job.id)).toMatchObject({
        state: JobState.JOB_STATE_DISCARDED,
        errors: [expect.objectContaining({ type: 'enqueue_ttl_expired' })],
      });
    }
  });

  it('keeps promoting and recovering whichever replica dies', async () => {
    for (let dead = 0; dead < set.replicas.length; dead++) {
      await set.kill(dead);
      const [one, other] = set.replicas.filter((_, i) => i !== dead);
      const queue = newQueue();
      const dying = await startWorker(one!, { queues: [queue], decide: () => 'hold' });
      const held = await enqueueOne(other!.clients, { queue });
      await dying.until(
        () => dying.confirmedJobIds().length === 1,
        () => 'the worker to confirm its job',
      );
      dying.silence();
      const survivor = await startWorker(other!, { queues: [queue] });
      const scheduled = await enqueueOne(one!.clients, { queue, scheduledAt: new Date(Date.now() + 200) });
      await survivor.until(
        () => survivor.acked.length === 2,
        () => `the recovered and the scheduled job with replica ${dead} dead, got ${idsOf(survivor.acked).join(',')}`,
      );
      expect(new Map(survivor.acked.map((d) => [d.job!.id, d.job!.attempt]))).toEqual(
        new Map([
          [held.id, 2],
          [scheduled.id, 1],
        ]),
      );
      await set.restart(dead);
    }
  });
});
