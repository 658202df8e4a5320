import { uuidv7 } from 'uuidv7';
import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne, getJob } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { TestServer, TEST_PROTOCOL, type Clients } from '../support/test-server';
import type { StreamReader } from '../support/streams';
import { TestWorker } from '../support/test-worker';

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;

describe('reservations and leases', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    // A long heartbeat timeout keeps the workers of this file alive while the clock jumps.
    server = await TestServer.start({ clock, protocol: { heartbeatTimeoutMs: 3_600_000 } });
    clients = server.connect();
  });
  afterAll(() => server.stop());

  const openStreams: { close(): void }[] = [];
  afterEach(() => {
    for (const stream of openStreams.splice(0)) stream.close();
  });

  async function nextDelivery(fetch: StreamReader<FetchResponse>): Promise<Delivery> {
    return (await fetch.nextMatching(hasDeliveries)).deliveries[0]!;
  }

  /** A worker with an open Fetch stream, holding one job. */
  async function setUp(job: Parameters<typeof enqueueOne>[1] = {}) {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    openStreams.push(fetch);
    const stored = await enqueueOne(clients, { queue, ...job });
    return { queue, worker, fetch, job: stored, delivery: await nextDelivery(fetch) };
  }

  it('reclaims a job whose visibility timeout lapses, as a failed attempt of type visibility_timeout', async () => {
    const { job } = await setUp();
    clock.advance(TEST_PROTOCOL.visibilityTimeoutMs - 1);
    await server.runMaintenance();
    expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
    clock.advance(1);
    await server.runMaintenance();
    expect(await getJob(clients, job.id)).toMatchObject({
      state: JobState.JOB_STATE_RETRYABLE,
      attempt: 1,
      workerId: '',
      error: { type: 'visibility_timeout', attempt: 1 },
      nextRetryAt: new Date(clock.now() + 1_000),
    });
  });

  it('discards a job whose visibility timeout lapses on its last attempt', async () => {
    const { job } = await setUp({ retry: { maxAttempts: 1 } });
    clock.advance(TEST_PROTOCOL.visibilityTimeoutMs);
    await server.runMaintenance();
    expect(await getJob(clients, job.id)).toMatchObject({ state: JobState.JOB_STATE_DISCARDED, errors: [{ type: 'visibility_timeout' }] });
  });

  it('honours a per-job visibility timeout', async () => {
    const custom = await setUp({ visibilityTimeout: 5 });
    const standard = await setUp();
    expect(custom.delivery.leaseExpiresAt).toEqual(new Date(clock.now() + 5_000));
    clock.advance(5_000);
    await server.runMaintenance();
    expect((await getJob(clients, custom.job.id)).state).toBe(JobState.JOB_STATE_RETRYABLE);
    expect((await getJob(clients, standard.job.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
  });

  it('lets only the reserving worker settle a job', async () => {
    const { worker, delivery, queue } = await setUp();
    const intruder = await TestWorker.register(clients, { queues: [queue] });
    for (const call of [intruder.ack(delivery), intruder.fail(delivery, { type: 'Boom' })]) {
      expect(await rpcError(call)).toMatchObject({
        code: Status.FAILED_PRECONDITION,
        reason: 'invalid_state',
        metadata: { lease_problem: 'other_worker' },
      });
    }
    await worker.ack(delivery);
  });

  it('refuses a late answer from an earlier attempt, even from the same worker', async () => {
    const { worker, job, fetch, delivery: first } = await setUp({ visibilityTimeout: 5 });
    clock.advance(5_000);
    await server.runMaintenance();
    clock.advance(1_000);
    await server.runMaintenance();
    const second = await nextDelivery(fetch);
    expect(second.job).toMatchObject({ id: job.id, attempt: 2 });
    expect(await rpcError(worker.ack(first))).toMatchObject({
      code: Status.FAILED_PRECONDITION,
      metadata: { lease_problem: 'stale_lease' },
    });
    await worker.ack(second);
    expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_COMPLETED);
  });

  it('extends a lease on request, only for the current lease token', async () => {
    const { worker, delivery } = await setUp();
    clock.advance(30_000);
    const extended = await clients.workers.extendLease({
      workerId: worker.workerId,
      jobId: delivery.job!.id,
      leaseToken: delivery.leaseToken,
    });
    expect(extended.leaseExpiresAt).toEqual(new Date(clock.now() + TEST_PROTOCOL.visibilityTimeoutMs));
    expect(
      await rpcError(clients.workers.extendLease({ workerId: worker.workerId, jobId: delivery.job!.id, leaseToken: 'forged' })),
    ).toMatchObject({ code: Status.FAILED_PRECONDITION });
    clock.advance(TEST_PROTOCOL.visibilityTimeoutMs - 1);
    await server.runMaintenance();
    expect((await getJob(clients, delivery.job!.id)).state).toBe(JobState.JOB_STATE_ACTIVE);
  });

  it('settles batches item by item', async () => {
    const { worker, delivery } = await setUp();
    const failed = await setUp();
    const acked = await clients.workers.ackBatch({
      workerId: worker.workerId,
      completions: [
        { jobId: delivery.job!.id, leaseToken: delivery.leaseToken, result: 42 },
        { jobId: failed.job.id, leaseToken: failed.delivery.leaseToken },
        { jobId: uuidv7(), leaseToken: 'x' },
        { jobId: 'missing', leaseToken: 'x' },
      ],
    });
    expect(acked.results.map((r) => [r.ok, r.errorCode, r.state])).toEqual([
      [true, '', JobState.JOB_STATE_COMPLETED],
      [false, 'invalid_state', 0],
      [false, 'not_found', 0],
      [false, 'invalid_request', 0],
    ]);
    const failures = await clients.workers.failBatch({
      workerId: failed.worker.workerId,
      failures: [
        { jobId: failed.job.id, leaseToken: failed.delivery.leaseToken, error: { type: 'Boom', message: 'x' } },
        { jobId: failed.job.id, leaseToken: failed.delivery.leaseToken },
      ],
    });
    expect(failures.results.map((r) => [r.ok, r.errorCode, r.state])).toEqual([
      [true, '', JobState.JOB_STATE_RETRYABLE],
      [false, 'invalid_request', 0],
    ]);
    expect(failures.results[0]!.nextRetryAt).toEqual(new Date(clock.now() + 1_000));
  });
});
