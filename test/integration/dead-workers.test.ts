import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type Delivery, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { TestServer, TEST_PROTOCOL, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

const TIMEOUT = TEST_PROTOCOL.heartbeatTimeoutMs;
const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;

describe('dead workers', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;
  const openStreams: { close(): void }[] = [];

  beforeAll(async () => {
    server = await TestServer.start({ clock });
    clients = server.connect();
  });
  afterEach(() => {
    for (const stream of openStreams.splice(0)) stream.close();
  });
  afterAll(() => server.stop());

  async function workerHolding(count = 1) {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    openStreams.push(fetch);
    const jobs = [];
    const deliveries: Delivery[] = [];
    for (let i = 0; i < count; i++) jobs.push(await enqueueOne(clients, { queue }));
    while (deliveries.length < count) deliveries.push(...(await fetch.nextMatching(hasDeliveries)).deliveries);
    return { worker, queue, jobs, deliveries, fetch };
  }

  async function isListed(workerId: string): Promise<boolean> {
    const { workers } = await clients.operator.listWorkers({ label: '', queue: '' });
    return workers.some((w) => w.workerId === workerId);
  }

  it('returns the jobs of a worker silent past the heartbeat timeout to the queue at once, and forgets the worker', async () => {
    const { worker, jobs, deliveries } = await workerHolding(2);
    const beat = worker.openBeat();
    openStreams.push(beat);
    await beat.beat(
      WorkerState.WORKER_STATE_RUNNING,
      jobs.map((j) => j.id),
    );
    clock.advance(TIMEOUT);
    await server.runMaintenance();
    expect(await isListed(worker.workerId)).toBe(true);
    clock.advance(1);
    await server.runMaintenance();
    for (const job of jobs) {
      expect(await getJob(clients, job.id)).toMatchObject({
        state: JobState.JOB_STATE_AVAILABLE,
        attempt: 1,
        workerId: '',
        error: { type: 'worker_death', attempt: 1 },
      });
    }
    expect(await isListed(worker.workerId)).toBe(false);
    // Split brain: the worker comes back and tries to finish what it held; its id is no longer registered.
    expect(await rpcError(worker.ack(deliveries[0]!))).toMatchObject({ code: Status.NOT_FOUND, reason: 'not_found' });
    expect(await rpcError(beat.responses.next())).toMatchObject({ code: Status.NOT_FOUND });
  });

  it('does not declare a worker dead just because its Beat stream closed', async () => {
    const { worker, jobs } = await workerHolding();
    const beat = worker.openBeat();
    await beat.beat(WorkerState.WORKER_STATE_RUNNING, [jobs[0]!.id]);
    beat.close();
    clock.advance(TIMEOUT - 1);
    await server.runMaintenance();
    expect(await isListed(worker.workerId)).toBe(true);
    expect((await getJob(clients, jobs[0]!.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
  });

  it('lets a worker whose Beat stream reconnects within the timeout keep and finish its jobs', async () => {
    const { worker, jobs, deliveries } = await workerHolding();
    const first = worker.openBeat();
    await first.beat(WorkerState.WORKER_STATE_RUNNING, [jobs[0]!.id]);
    first.close();
    for (let i = 0; i < 5; i++) {
      clock.advance(TIMEOUT - 1);
      await server.runMaintenance();
      const again = worker.openBeat();
      await again.beat(WorkerState.WORKER_STATE_RUNNING, [jobs[0]!.id]);
      again.close();
    }
    await worker.ack(deliveries[0]!);
    expect(await getJob(clients, jobs[0]!.id)).toMatchObject({ state: JobState.JOB_STATE_COMPLETED, attempt: 1, errors: [] });
  });

  it('requeues, without spending an attempt, a delivery its live worker never confirms', async () => {
    const { worker, jobs, deliveries, fetch } = await workerHolding();
    const beat = worker.openBeat();
    openStreams.push(beat);
    for (let elapsed = 0; elapsed <= TIMEOUT; elapsed += TEST_PROTOCOL.heartbeatIntervalMs) {
      await beat.beat(WorkerState.WORKER_STATE_RUNNING, []);
      await server.runMaintenance();
      clock.advance(TEST_PROTOCOL.heartbeatIntervalMs);
    }
    await server.runMaintenance();
    // Back in the queue, so the open stream receives it again, as the same attempt.
    const [again] = (await fetch.nextMatching(hasDeliveries)).deliveries;
    expect(again!.job).toMatchObject({ id: jobs[0]!.id, attempt: 1, errors: [] });
    expect(again!.leaseToken).not.toBe(deliveries[0]!.leaseToken);
    expect(await isListed(worker.workerId)).toBe(true);
  });

  it('refuses a second live registration of a worker id, but accepts one after the first went silent', async () => {
    const { worker, jobs } = await workerHolding();
    const again = { workerId: worker.workerId, hostname: 'h', pid: 2, queues: [], concurrency: 1, labels: [] };
    expect(await rpcError(clients.workers.register(again))).toMatchObject({ code: Status.ALREADY_EXISTS, reason: 'duplicate' });
    clock.advance(TIMEOUT + 1);
    await clients.workers.register(again);
    expect(await getJob(clients, jobs[0]!.id)).toMatchObject({ state: JobState.JOB_STATE_AVAILABLE, error: { type: 'worker_death' } });
  });

  it('fails the jobs a worker still holds when it deregisters, with error type shutdown', async () => {
    const { worker, jobs } = await workerHolding();
    const reply = await clients.workers.deregister({ workerId: worker.workerId });
    expect(reply.releasedJobIds).toEqual([jobs[0]!.id]);
    expect(await getJob(clients, jobs[0]!.id)).toMatchObject({ state: JobState.JOB_STATE_AVAILABLE, error: { type: 'shutdown' } });
    expect(await rpcError(clients.workers.deregister({ workerId: worker.workerId }))).toMatchObject({ code: Status.NOT_FOUND });
  });
});
