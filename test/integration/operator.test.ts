import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { WorkerState, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueue } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

describe('OperatorService', () => {
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start();
    clients = server.connect();
  });
  afterAll(() => server.stop());

  it('lists workers with their state, last beat, held jobs and labels', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue], labels: ['canary', 'v2'], concurrency: 3 });
    const fetch = worker.openFetch();
    const [job] = await enqueue(clients, { queue });
    await fetch.nextMatching((m: FetchResponse) => m.deliveries.length > 0);
    const beat = worker.openBeat();
    await beat.beat(WorkerState.WORKER_STATE_RUNNING, [job!.id]);
    await clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_QUIET, target: { $case: 'workerId', value: worker.workerId } });
    const { workers } = await clients.operator.listWorkers({ label: 'canary', queue: '' });
    expect(workers).toEqual([
      expect.objectContaining({
        workerId: worker.workerId,
        hostname: 'test-host',
        pid: process.pid,
        queues: [queue],
        concurrency: 3,
        labels: ['canary', 'v2'],
        state: WorkerState.WORKER_STATE_RUNNING,
        desiredState: WorkerState.WORKER_STATE_QUIET,
        activeJobs: 1,
        activeJobIds: [job!.id],
      }),
    ]);
    expect(workers[0]!.lastBeatAt).toBeInstanceOf(Date);
    expect((await clients.operator.listWorkers({ label: '', queue })).workers.map((w) => w.workerId)).toEqual([worker.workerId]);
    beat.close();
    fetch.close();
  });

  it('counts the jobs of every queue per state', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const jobs = await enqueue(clients, { queue }, { queue }, { queue, scheduledAt: new Date(Date.now() + 3_600_000) });
    await clients.jobs.cancelJob({ jobId: jobs[0]!.id });
    const { queues } = await clients.operator.listQueues({});
    const info = queues.find((q) => q.name === queue)!;
    expect(info).toEqual({
      name: queue,
      scheduled: 1,
      available: 1,
      pending: 0,
      active: 0,
      completed: 0,
      retryable: 0,
      cancelled: 1,
      discarded: 0,
      paused: false,
      lag: info.lag,
      oldestAvailableAt: jobs[1]!.enqueuedAt,
    });
  });

  it('refuses a directive without a target or a state', async () => {
    expect(await rpcError(clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_QUIET }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      fields: ['target'],
    });
    expect(
      await rpcError(
        clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_UNSPECIFIED, target: { $case: 'label', value: 'x' } }),
      ),
    ).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['state'] });
    expect(
      await rpcError(
        clients.operator.setWorkerState({ state: WorkerState.WORKER_STATE_QUIET, target: { $case: 'workerId', value: 'ghost' } }),
      ),
    ).toMatchObject({ code: Status.NOT_FOUND });
  });
});
