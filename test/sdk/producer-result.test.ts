import { Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { JobState } from '../../gen/ojs/server/v1/job';
import { JobCancelledError, JobFailedError, JobFailure, JobWaitTimeoutError, Producer, Worker, type Job } from '../../packages/sdk/src';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { freePort } from '../../tools/redis-server';
import { CuttingProxy } from '../support/cutting-proxy';
import { getJob } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { RecordingLogger } from '../support/silent-logger';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { eventuallyHolds, Progress } from '../support/waiting';

/** A queue no worker consumes: its jobs wait until the test settles them. */
const IDLE_QUEUE = 'results-idle';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

/** What a rejected wait rejected with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/**
 * Producer.result(): waits through WaitForJob for a job run by a real SDK
 * worker against a real server, and turns the finished job into its result
 * or a typed error.
 */
describe("the SDK producer's result()", () => {
  let server: TestServer;
  let clients: Clients;
  let producer: Producer;
  let worker: Worker;
  let started = deferred<string>();
  let release = deferred<void>();

  beforeAll(async () => {
    server = await TestServer.start({ runMaintenance: true });
    clients = server.connect();
    producer = new Producer({ address: server.address });
    worker = new Worker({ address: server.address, queues: ['results'], concurrency: 4, logger: new RecordingLogger() })
      .handle('result.echo', async ([value]) => value)
      .handle('result.held', async ([n], ctx) => {
        started.resolve(ctx.job.id);
        await release.promise;
        return { doubled: Number(n) * 2 };
      })
      .handle('result.broken', async (_, ctx) => {
        throw new JobFailure(`broken on attempt ${ctx.attempt}`, { type: 'result.broken' });
      });
    await worker.start();
  });
  beforeEach(() => {
    started = deferred<string>();
    release = deferred<void>();
  });
  afterAll(async () => {
    producer.close();
    await worker.stop({ force: true });
    await server.stop();
  });

  const idleJob = (): Promise<Job> => producer.enqueue({ type: 'result.idle', queue: IDLE_QUEUE });

  it('resolves with the result of a job that completes while it waits, given the job enqueue returned', async () => {
    const job = await producer.enqueue({ type: 'result.held', queue: 'results', args: [21] });
    const waiting = producer.result(job);
    expect(await started.promise).toBe(job.id);
    release.resolve();
    expect(await waiting).toEqual({ doubled: 42 });
  });

  it('resolves at once, given the id, with the result of a job that has already completed', async () => {
    const value = { nested: [1, 'two', null, true], text: 'é✓' };
    const job = await producer.enqueue({ type: 'result.echo', queue: 'results', args: [value] });
    await eventuallyHolds(
      () => getJob(clients, job.id),
      (stored) => stored.state === JobState.JOB_STATE_COMPLETED,
    );
    expect(await producer.result(job.id, { timeoutMs: 5_000 })).toEqual(value);
  });

  it('rejects with a JobFailedError carrying the last error of a job its retries discarded into the dead letter', async () => {
    const job = await producer.enqueue({
      type: 'result.broken',
      queue: 'results',
      retry: { maxAttempts: 2, initialInterval: 'PT0.01S', jitter: false, onExhaustion: 'dead_letter' },
    });
    const error = await rejection(producer.result(job));
    expect(error).toBeInstanceOf(JobFailedError);
    const failed = error as JobFailedError;
    expect(failed).toMatchObject({
      jobId: job.id,
      isDeadLetter: true,
      error: { type: 'result.broken', message: 'broken on attempt 2', attempt: 2 },
    });
    expect(failed.job.state).toBe('discarded');
    expect(failed.job.errors.map((e) => e.message)).toContain('broken on attempt 1');
    expect(failed.message).toBe(
      `job ${job.id} (result.broken) was discarded into the dead letter set after attempt 2: result.broken: broken on attempt 2`,
    );
  });

  it('rejects with a JobCancelledError when the job is cancelled while it waits', async () => {
    const job = await idleJob();
    const waiting = rejection(producer.result(job));
    await clients.jobs.cancelJob({ jobId: job.id });
    const error = await waiting;
    expect(error).toBeInstanceOf(JobCancelledError);
    expect((error as JobCancelledError).job).toMatchObject({ id: job.id, state: 'cancelled' });
  });

  it('asks again after each unfinished answer, and gives up with a JobWaitTimeoutError when its timeout passes', async () => {
    const polling = new Producer({ address: server.address, resultCallWaitMs: 50 });
    try {
      const job = await idleJob();
      const startedAt = performance.now();
      const error = await rejection(polling.result(job, { timeoutMs: 400 }));
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(390);
      expect(error).toBeInstanceOf(JobWaitTimeoutError);
      expect(error).toMatchObject({ jobId: job.id, timeoutMs: 400, job: { id: job.id, state: 'available' } });
      expect((error as Error).message).toBe(`job ${job.id} did not finish within 400 ms (still available)`);
      expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
    } finally {
      polling.close();
    }
  });

  it("ends the wait with the signal's reason when its signal aborts, leaving the job alone", async () => {
    const job = await idleJob();
    const stop = new AbortController();
    const waiting = rejection(producer.result(job, { signal: stop.signal }));
    stop.abort(new Error('no longer needed'));
    expect(await waiting).toEqual(new Error('no longer needed'));
    expect(await rejection(producer.result(job, { signal: AbortSignal.abort(new Error('already over')) }))).toEqual(
      new Error('already over'),
    );
    expect((await getJob(clients, job.id)).state).toBe(JobState.JOB_STATE_AVAILABLE);
  });

  it('rejects with NOT_FOUND for a job the server does not hold', async () => {
    expect(await rpcError(producer.result(uuidv7()))).toMatchObject({ code: Status.NOT_FOUND });
  });

  it('refuses a timeout or a call wait that is not a positive number of milliseconds', async () => {
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
      expect(await rejection(producer.result(uuidv7(), { timeoutMs }))).toBeInstanceOf(RangeError);
    expect(() => new Producer({ address: server.address, resultCallWaitMs: 0 })).toThrow(/resultCallWaitMs must be a whole number/);
    expect(() => new Producer({ address: server.address, resultCallWaitMs: 3_600_001 })).toThrow(RangeError);
  });

  it('asks again when the answer saying the job finished is lost', async () => {
    const proxy = await CuttingProxy.start(server.address);
    const behindProxy = new Producer({ address: proxy.address });
    try {
      const job = await producer.enqueue({ type: 'result.echo', queue: 'results', args: ['kept'] });
      await eventuallyHolds(
        () => getJob(clients, job.id),
        (stored) => stored.state === JobState.JOB_STATE_COMPLETED,
      );
      const cut = proxy.cutNextAnswer();
      expect(await behindProxy.result(job)).toBe('kept');
      await cut;
    } finally {
      behindProxy.close();
      await proxy.close();
    }
  });
});

/**
 * A memory store that counts the followers of its facts: a WaitForJob call
 * follows them while the server holds it, so the test can stop the server
 * under a call it knows is waiting.
 */
class FollowedStore extends MemoryJobStore {
  followers = 0;
  readonly progress = new Progress();

  override async followFacts(...args: Parameters<MemoryJobStore['followFacts']>): ReturnType<MemoryJobStore['followFacts']> {
    const unfollow = await super.followFacts(...args);
    this.followers += 1;
    this.progress.changed();
    return unfollow;
  }
}

describe("the SDK producer's result() across a server restart", () => {
  let servers: TestServer[] = [];
  let producer: Producer | undefined;

  afterEach(async () => {
    producer?.close();
    for (const server of servers) await server.stop();
    servers = [];
  });

  it('goes on waiting when the server stops under its call, and answers once the restarted server finishes the job', async () => {
    const port = await freePort();
    const store = new FollowedStore();
    const serve = async (): Promise<TestServer> => {
      const server = await TestServer.start({ port, store: async () => store });
      servers.push(server);
      return server;
    };
    const first = await serve();
    producer = new Producer({ address: first.address, retries: 50 });
    const job = await producer.enqueue({ type: 'result.restart', queue: 'results-restart' });
    const waiting = producer.result(job);
    await store.progress.until(
      () => store.followers > 0,
      () => 'the server to hold the WaitForJob call',
    );
    await first.stop();
    const second = await serve();
    const holder = await TestWorker.register(second.connect(), { queues: ['results-restart'] });
    const fetch = holder.openFetch();
    const [delivery] = (await fetch.next()).deliveries;
    fetch.close();
    await holder.ack(delivery!, { after: 'restart' });
    expect(await waiting).toEqual({ after: 'restart' });
  });
});
