import { JobState } from '../../gen/ojs/server/v1/job';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import type { JobStore } from '../../src/store/job-store';
import { freePort } from '../../tools/redis-server';
import { enqueueOne, getJob } from '../support/jobs';
import { TestServer } from '../support/test-server';
import { eventuallyHolds } from '../support/waiting';
import { WorkerProcess } from '../support/worker-process';

/**
 * "Survives the server going away": the server stops under a worker holding
 * a job, and comes back on the same address, with the same store (another
 * replica on a shared store) or with an empty one (a store that lost
 * everything). Streams reconnect, the registration is restored, and the job
 * finished meanwhile is acknowledged once the server is back.
 */
describe('an SDK worker whose server goes away', () => {
  let port: number;
  let worker: WorkerProcess | undefined;
  let server: TestServer | undefined;

  beforeEach(async () => {
    port = await freePort();
  });
  afterEach(async () => {
    await worker?.kill();
    await server?.stop();
    worker = undefined;
    server = undefined;
  });

  const serve = (store: JobStore) => TestServer.start({ port, runMaintenance: true, store: async () => store });

  it('keeps running its job and acknowledges it once the server is back', async () => {
    const store = new MemoryJobStore();
    server = await serve(store);
    worker = await WorkerProcess.start(server.address);
    const job = await enqueueOne(server.connect(), { type: 'test.sleep', args: [1_000] });
    await worker.event('start', job.id);
    await server.stop();
    server = await serve(store);
    await worker.event('done', job.id);
    const clients = server.connect();
    await eventuallyHolds(
      () => getJob(clients, job.id),
      (j) => j.state === JobState.JOB_STATE_COMPLETED,
    );
    expect((await getJob(clients, job.id)).attempt).toBe(1);
  });

  it('registers again with a server that forgot it, and takes new jobs', async () => {
    server = await serve(new MemoryJobStore());
    worker = await WorkerProcess.start(server.address);
    await server.stop();
    server = await serve(new MemoryJobStore());
    const clients = server.connect();
    await eventuallyHolds(
      () => clients.operator.listWorkers({ label: '', queue: '' }),
      (reply) => reply.workers.some((w) => w.workerId === worker!.workerId),
    );
    const job = await enqueueOne(clients, { type: 'test.echo', args: [1] });
    await worker.event('done', job.id);
    await eventuallyHolds(
      () => getJob(clients, job.id),
      (j) => j.state === JobState.JOB_STATE_COMPLETED,
    );
    expect(worker.count((l) => l['msg'] === 'the server no longer knows this worker; registering again')).toBeGreaterThan(0);
  });
});
