import { randomUUID } from 'node:crypto';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import type { DeepPartial, Job } from '../../gen/ojs/server/v1/job';
import { enqueue, enqueueOne, getJob } from '../support/jobs';
import { TestServer, type Clients } from '../support/test-server';
import { eventuallyHolds } from '../support/waiting';
import { WorkerProcess } from '../support/worker-process';

/**
 * The SDK worker as users run it: a real process (tools/sdk-test-worker.ts)
 * against a real server, driven by real signals and server directives.
 */
describe('the SDK worker process', () => {
  let server: TestServer;
  let clients: Clients;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    server = await TestServer.start({ runMaintenance: true });
    clients = server.connect();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
  });
  afterAll(() => server.stop());

  /** A worker on a queue of its own. */
  async function startWorker(env: Record<string, string> = {}) {
    const queue = `sdk-${randomUUID().slice(0, 8)}`;
    const worker = await WorkerProcess.start(server.address, { OJS_QUEUES: queue, ...env });
    workers.push(worker);
    return { worker, queue, jobs: (...specs: DeepPartial<Job>[]) => enqueue(clients, ...specs.map((s) => ({ queue, ...s }))) };
  }

  const stateOf = async (jobId: string) => (await getJob(clients, jobId)).state;
  const workerInfo = async (workerId: string) =>
    (await clients.operator.listWorkers({ label: '', queue: '' })).workers.find((w) => w.workerId === workerId);

  it('runs jobs within its concurrency and acknowledges them with their results', async () => {
    const { worker, jobs } = await startWorker({ OJS_CONCURRENCY: '3' });
    const stored = await jobs(...Array.from({ length: 9 }, () => ({ type: 'test.sleep', args: [30] })), {
      type: 'test.echo',
      args: ['hi', 2],
    });
    for (const job of stored) await worker.event('done', job.id);
    await eventuallyHolds(
      () => stateOf(stored[9]!.id),
      (s) => s === JobState.JOB_STATE_COMPLETED,
    );
    expect((await getJob(clients, stored[9]!.id)).result).toEqual({ echoed: ['hi', 2] });
    const peak = Math.max(...worker.lines.filter((l) => l['test'] === 'start').map((l) => Number(l['running'])));
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
  });

  it('fails a throwing job with a structured error, and the retry policy applies', async () => {
    const { worker, jobs } = await startWorker();
    const [job] = await jobs({ type: 'test.fail', args: ['payment.declined'], retry: { maxAttempts: 1 } });
    await worker.event('threw', job!.id);
    const failed = await eventuallyHolds(
      () => getJob(clients, job!.id),
      (j) => j.state === JobState.JOB_STATE_DISCARDED,
    );
    expect(failed.error).toMatchObject({ type: 'payment.declined', message: 'failed on purpose' });
    expect(failed.error!.backtrace.length).toBeGreaterThan(0);
  });

  it('on SIGTERM: quiets, drains, fails what is left with shutdown, beats terminate, deregisters and exits 0', async () => {
    const { worker, jobs } = await startWorker({ OJS_SHUTDOWN_GRACE_PERIOD: '1s', OJS_CONCURRENCY: '2' });
    const [short, long] = await jobs({ type: 'test.sleep', args: [300] }, { type: 'test.sleep', args: [60_000] });
    await worker.event('start', short!.id);
    await worker.event('start', long!.id);
    worker.signal('SIGTERM');
    const [waiting] = await jobs({ type: 'test.echo' });
    expect(await worker.exitCode()).toBe(0);

    expect(await stateOf(short!.id)).toBe(JobState.JOB_STATE_COMPLETED);
    const interrupted = await getJob(clients, long!.id);
    expect([JobState.JOB_STATE_RETRYABLE, JobState.JOB_STATE_AVAILABLE]).toContain(interrupted.state);
    expect(interrupted.error).toMatchObject({ type: 'shutdown' });
    expect(worker.lines.find((l) => l['test'] === 'threw' && l['jobId'] === long!.id)).toMatchObject({ reason: 'shutdown' });
    expect(await stateOf(waiting!.id)).toBe(JobState.JOB_STATE_AVAILABLE);
    const messages = worker.lines
      .map((l) => l['msg'] ?? (l['test'] === 'phase' ? `phase ${String(l['phase'])}` : undefined))
      .filter(Boolean);
    expect(messages).toEqual(
      expect.arrayContaining(['signal: stopping gracefully', 'phase stopping', 'stopping: no new jobs', 'phase stopped', 'worker stopped']),
    );
    expect(messages.indexOf('signal: stopping gracefully')).toBeLessThan(messages.indexOf('worker stopped'));
    expect(await workerInfo(worker.workerId)).toBeUndefined();
    // The server saw the worker go quiet, then terminate, then leave.
    const transitions = server.spans
      .getFinishedSpans()
      .filter((s) => s.name === 'ojs.worker.transition' && s.attributes['ojs.worker.id'] === worker.workerId)
      .map((s) => `${String(s.attributes['ojs.worker.state.from'])}->${String(s.attributes['ojs.worker.state.to'])}`);
    expect(transitions).toEqual(expect.arrayContaining(['running->quiet', 'quiet->terminate', 'terminate->terminated']));
  });

  it('stops gracefully on SIGINT too, beating and logging the remaining count every 5 s while it drains', async () => {
    const { worker, jobs } = await startWorker({ OJS_SHUTDOWN_GRACE_PERIOD: '6s' });
    const [job] = await jobs({ type: 'test.sleep', args: [60_000] });
    await worker.event('start', job!.id);
    worker.signal('SIGINT');
    expect(await worker.log('draining')).toMatchObject({ remaining: 1 });
    // 5 s into the drain, past the server's 3 s heartbeat timeout: only beats that kept coming keep it registered.
    expect((await workerInfo(worker.workerId))?.state).toBe(WorkerState.WORKER_STATE_TERMINATE);
    expect(await worker.exitCode()).toBe(0);
    expect((await getJob(clients, job!.id)).error).toMatchObject({ type: 'shutdown' });
  });

  it('stops at once on a second SIGTERM, failing the running job with shutdown, and exits 1', async () => {
    const { worker, jobs } = await startWorker({ OJS_SHUTDOWN_GRACE_PERIOD: '60s' });
    const [job] = await jobs({ type: 'test.sleep', args: [60_000] });
    await worker.event('start', job!.id);
    worker.signal('SIGTERM');
    await worker.log('stopping: no new jobs');
    worker.signal('SIGTERM');
    expect(await worker.exitCode()).toBe(1);
    expect((await getJob(clients, job!.id)).error).toMatchObject({ type: 'shutdown' });
  });

  it('quiets on SIGTSTP (no new jobs, running ones finish) and resumes on SIGCONT', async () => {
    const { worker, jobs } = await startWorker();
    const [running] = await jobs({ type: 'test.sleep', args: [200] });
    await worker.event('start', running!.id);
    worker.signal('SIGTSTP');
    await eventuallyHolds(
      () => workerInfo(worker.workerId),
      (w) => w?.state === WorkerState.WORKER_STATE_QUIET,
    );
    const [held] = await jobs({ type: 'test.echo' });
    await worker.event('done', running!.id);
    expect(await stateOf(held!.id)).toBe(JobState.JOB_STATE_AVAILABLE);
    worker.signal('SIGCONT');
    await worker.event('done', held!.id);
  });

  it('follows the server: quiet and running directives, then terminate, which stops the process with exit 0', async () => {
    const { worker, jobs } = await startWorker();
    await clients.operator.setWorkerState({ target: { $case: 'workerId', value: worker.workerId }, state: WorkerState.WORKER_STATE_QUIET });
    await worker.event('phase', undefined, { phase: 'quiet' });
    const [job] = await jobs({ type: 'test.echo' });
    await clients.operator.setWorkerState({
      target: { $case: 'workerId', value: worker.workerId },
      state: WorkerState.WORKER_STATE_RUNNING,
    });
    await worker.event('done', job!.id);
    await clients.operator.setWorkerState({
      target: { $case: 'workerId', value: worker.workerId },
      state: WorkerState.WORKER_STATE_TERMINATE,
    });
    expect(await worker.exitCode()).toBe(0);
    expect(await workerInfo(worker.workerId)).toBeUndefined();
  });

  it('aborts a handler whose job is cancelled, and answers nothing for it', async () => {
    const { worker, jobs } = await startWorker();
    const [job] = await jobs({ type: 'test.sleep', args: [60_000] });
    await worker.event('start', job!.id);
    await clients.jobs.cancelJob({ jobId: job!.id });
    expect(await worker.event('threw', job!.id)).toMatchObject({ reason: 'cancelled' });
    await worker.log('job stopped', { jobId: job!.id });
    expect(worker.count((l) => l['msg'] === 'the server refused the settlement')).toBe(0);
  });

  it('aborts a handler at its timeout, fails it with timeout, and hands its checkpoint to the next attempt', async () => {
    const { worker, jobs } = await startWorker();
    const [job] = await jobs({
      type: 'test.checkpoint',
      args: [60_000],
      timeout: 1,
      gracePeriod: 1,
      retry: { maxAttempts: 2, initialInterval: 'PT0.1S' },
    });
    expect(await worker.event('threw', job!.id)).toMatchObject({ reason: 'timeout' });
    const retried = await worker.event('start', job!.id, { attempt: 2 });
    expect(retried['lastCheckpoint']).toEqual({ resumeFrom: 1 });
    const history = (await getJob(clients, job!.id)).errors;
    expect(history[0]).toMatchObject({ type: 'timeout', attempt: 1 });
  });

  it('serves a readiness endpoint that turns unhealthy when quiet', async () => {
    const { worker } = await startWorker({ OJS_READINESS_PORT: '0' });
    const port = Number((await worker.log('worker started'))['readinessPort']);
    const status = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).status;
    expect(await status('/ready')).toBe(200);
    worker.signal('SIGTSTP');
    await worker.event('phase', undefined, { phase: 'quiet' });
    expect(await status('/ready')).toBe(503);
    expect(await status('/live')).toBe(200);
  });
});

/** worker-protocol 10.3 and the "no false stalls": the defaults tolerate a blocked event loop and a busy worker. */
describe('the SDK worker under the default timings', () => {
  let server: TestServer;
  let clients: Clients;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    server = await TestServer.start({
      runMaintenance: true,
      protocol: { heartbeatIntervalMs: 5_000, heartbeatTimeoutMs: 30_000, visibilityTimeoutMs: 1_800_000, jobTimeoutMs: 1_800_000 },
    });
    clients = server.connect();
  });
  afterAll(async () => {
    await worker?.kill();
    await server.stop();
  });

  it('keeps a job whose handler blocks the event loop for seconds, and a busy worker, alive', async () => {
    worker = await WorkerProcess.start(server.address, { OJS_QUEUES: 'busy', OJS_CONCURRENCY: '20' });
    const blocking = await enqueueOne(clients, { queue: 'busy', type: 'test.block', args: [3_000] });
    const busy = await enqueue(clients, ...Array.from({ length: 60 }, () => ({ queue: 'busy', type: 'test.sleep', args: [100] })));
    for (const job of [blocking, ...busy]) await worker.event('done', job.id);
    for (const job of [blocking, ...busy]) {
      const settled = await eventuallyHolds(
        () => getJob(clients, job.id),
        (j) => j.state === JobState.JOB_STATE_COMPLETED,
      );
      expect(settled).toMatchObject({ attempt: 1, errors: [] });
    }
    const info = (await clients.operator.listWorkers({ label: '', queue: '' })).workers.find((w) => w.workerId === worker!.workerId);
    expect(info?.state).toBe(WorkerState.WORKER_STATE_RUNNING);
  });
});
