import { randomUUID } from 'node:crypto';
import { Metadata, Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import type { StreamReader } from '../support/streams';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
const queueName = (): string => `q-${randomUUID().slice(0, 8)}`;

describe('the Fetch stream', () => {
  let server: TestServer;
  let clients: Clients;

  // Background loops are off and keepalives are far apart: a job can only
  // reach a waiting worker through the wake-up on enqueue.
  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  afterAll(() => server.stop());

  async function nextDeliveries(fetch: StreamReader<FetchResponse>): Promise<Delivery[]> {
    return (await fetch.nextMatching(hasDeliveries)).deliveries;
  }

  it('echoes x-ojs-request-id and names the server version as it opens, before any delivery', async () => {
    const worker = await TestWorker.register(clients);
    let fetch: StreamReader<FetchResponse> | undefined;
    const header = await new Promise<Metadata>((onHeader) => {
      fetch = worker.openFetch({}, { metadata: Metadata({ 'x-ojs-request-id': 'fetch-7' }), onHeader });
    });
    expect(header.get('x-ojs-request-id')).toBe('fetch-7');
    expect(header.get('x-ojs-server-version')).toBe('test');
    fetch!.close();
  });

  it('pushes a job enqueued while the worker waits, and Ack completes it', async () => {
    const queue = queueName();
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    const job = await enqueueOne(clients, { queue, args: ['x', 1] });
    const [delivery] = await nextDeliveries(fetch);
    expect(delivery!.job).toMatchObject({
      id: job.id,
      state: JobState.JOB_STATE_ACTIVE,
      attempt: 1,
      args: ['x', 1],
      workerId: worker.workerId,
    });
    expect(delivery!.leaseToken).not.toBe('');
    expect(delivery!.leaseExpiresAt!.getTime()).toBeGreaterThan(Date.now());
    await worker.ack(delivery!, { ok: true });
    expect(await getJob(clients, job.id)).toMatchObject({ state: JobState.JOB_STATE_COMPLETED, result: { ok: true }, workerId: '' });
    fetch.close();
  });

  it('delivers a batch enqueued at once in one message', async () => {
    const queue = queueName();
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    await enqueue(clients, ...Array.from({ length: 5 }, () => ({ queue })));
    expect(await nextDeliveries(fetch)).toHaveLength(5);
    fetch.close();
  });

  it('takes queues in the worker order, then priority, then FIFO', async () => {
    const [first, second] = [queueName(), queueName()];
    const worker = await TestWorker.register(clients, { queues: [first, second], concurrency: 1 });
    const [s1, f1, f2, f3] = await enqueue(clients, { queue: second }, { queue: first }, { queue: first, priority: 9 }, { queue: first });
    const fetch = worker.openFetch();
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [delivery] = await nextDeliveries(fetch);
      order.push(delivery!.job!.id);
      await worker.ack(delivery!);
    }
    expect(order).toEqual([f2, f1, f3, s1].map((j) => j!.id));
    fetch.close();
  });

  it('never sends more than the worker concurrency, and sends more as jobs are settled', async () => {
    const queue = queueName();
    const worker = await TestWorker.register(clients, { queues: [queue], concurrency: 2 });
    const jobs = await enqueue(clients, ...Array.from({ length: 5 }, () => ({ queue })));
    const fetch = worker.openFetch();
    const first = await nextDeliveries(fetch);
    expect(first).toHaveLength(2);
    const waiting = await Promise.all(jobs.slice(2).map((j) => getJob(clients, j.id)));
    expect(waiting.map((j) => j.state)).toEqual([JobState.JOB_STATE_AVAILABLE, JobState.JOB_STATE_AVAILABLE, JobState.JOB_STATE_AVAILABLE]);
    await worker.ack(first[0]!);
    const second = await nextDeliveries(fetch);
    expect(second).toHaveLength(1);
    expect(second[0]!.job!.id).toBe(jobs[2]!.id);
    fetch.close();
  });

  it('gives jobs only to a worker with a live Fetch stream', async () => {
    const queue = queueName();
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const job = await enqueueOne(clients, { queue });
    expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
    const fetch = worker.openFetch();
    expect((await nextDeliveries(fetch))[0]!.job!.id).toBe(job.id);
    fetch.close();
  });

  it('never delivers a job twice to many concurrent workers', async () => {
    const queue = queueName();
    const workers = await Promise.all(Array.from({ length: 20 }, () => TestWorker.register(clients, { queues: [queue], concurrency: 10 })));
    const seen: string[] = [];
    let resolveAll!: () => void;
    const allSeen = new Promise<void>((resolve) => {
      resolveAll = resolve;
    });
    const total = 1000;
    const fetches = workers.map((worker) => {
      const fetch = worker.openFetch();
      void (async () => {
        for (;;) {
          const deliveries = await nextDeliveries(fetch).catch(() => undefined);
          if (deliveries === undefined) return;
          for (const delivery of deliveries) {
            seen.push(delivery.job!.id);
            await worker.ack(delivery);
          }
          if (seen.length >= total) resolveAll();
        }
      })();
      return fetch;
    });
    const jobs = await enqueue(clients, ...Array.from({ length: total }, () => ({ queue })));
    await allSeen;
    expect(seen).toHaveLength(total);
    expect(new Set(seen)).toEqual(new Set(jobs.map((j) => j.id)));
    for (const fetch of fetches) fetch.close();
  });

  it('sends keepalives on an idle stream', async () => {
    const fast = await TestServer.start({ protocol: { streamKeepaliveMs: 25 } });
    const worker = await TestWorker.register(fast.connect());
    const fetch = worker.openFetch();
    expect((await fetch.next()).deliveries).toEqual([]);
    expect((await fetch.next()).deliveries).toEqual([]);
    fetch.close();
    await fast.stop();
  });

  it('ends cleanly when max_wait passes', async () => {
    const worker = await TestWorker.register(clients, { queues: [queueName()] });
    expect(await worker.openFetch({ maxWaitMs: 50 }).ended()).toEqual([]);
  });

  it('ends cleanly when an operator quiets the worker, and refuses to reopen while quiet', async () => {
    const worker = await TestWorker.register(clients, { queues: [queueName()] });
    const fetch = worker.openFetch();
    const ended = fetch.ended();
    await clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_QUIET, target: { $case: 'workerId', value: worker.workerId } });
    await expect(ended).resolves.toEqual([]);
    expect(await rpcError(worker.openFetch().next())).toMatchObject({ code: Status.FAILED_PRECONDITION, reason: 'invalid_state' });
  });

  it('ends cleanly when the worker reports quiet on its Beat stream', async () => {
    const worker = await TestWorker.register(clients, { queues: [queueName()] });
    const fetch = worker.openFetch();
    const ended = fetch.ended();
    const beat = worker.openBeat();
    expect((await beat.beat(WorkerState.WORKER_STATE_QUIET)).state).toBe(WorkerState.WORKER_STATE_QUIET);
    await expect(ended).resolves.toEqual([]);
    beat.close();
  });

  it('ends cleanly when the worker deregisters', async () => {
    const worker = await TestWorker.register(clients, { queues: [queueName()] });
    const fetch = worker.openFetch();
    const ended = fetch.ended();
    await clients.workers.deregister({ workerId: worker.workerId });
    await expect(ended).resolves.toEqual([]);
  });

  it('replaces an older stream of the same worker, which ends cleanly', async () => {
    const queue = queueName();
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const old = worker.openFetch();
    await enqueueOne(clients, { queue });
    await nextDeliveries(old).then((d) => worker.ack(d[0]!));
    const fresh = worker.openFetch();
    await expect(old.ended()).resolves.toEqual([]);
    const job = await enqueueOne(clients, { queue });
    expect((await nextDeliveries(fresh))[0]!.job!.id).toBe(job.id);
    fresh.close();
  });

  it('refuses unknown workers and queues the worker did not register', async () => {
    const worker = await TestWorker.register(clients, { queues: ['registered'] });
    expect(await rpcError(worker.openFetch({ queues: ['other'] }).next())).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['queues[0]'],
    });
    expect(await rpcError(clients.workers.fetch({ workerId: 'ghost', queues: [] })[Symbol.asyncIterator]().next())).toMatchObject({
      code: Status.NOT_FOUND,
      reason: 'not_found',
    });
  });
});
