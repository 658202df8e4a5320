import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus as Serving } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { JobState } from '../../gen/ojs/server/v1/job';
import { WorkerState, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { ServerProcess } from '../../tools/server-process';
import { enqueueOne, getJob, jobSpec } from '../support/jobs';
import { objectContaining } from '../support/matchers';
import { rpcError } from '../support/rpc-error';
import { auditRedis, auditThenStop } from '../support/store-audit';
import { StreamReader } from '../support/streams';
import { connectTo, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import { within } from '../support/waiting';

/**
 * Redis going away is survived: while it is away every RPC answers
 * UNAVAILABLE at once (ioredis runs without an offline queue and fails
 * in-flight commands when the connection drops, see redis-connection.ts),
 * gRPC health says NOT_SERVING, and the server process stays up; when Redis
 * returns on the same address, everything recovers without a restart.
 */

const hasDeliveries = (m: FetchResponse): boolean => m.deliveries.length > 0;
/** A bound on calls that must answer at once: a hang fails the test instead of stalling it. */
const promptly = (): { signal: AbortSignal } => ({ signal: AbortSignal.timeout(3_000) });

describe('a Redis outage', () => {
  let redis: RedisServerProcess;
  let server: ServerProcess;
  let clients: Clients;
  const prefix = testPrefix();
  const streams: { close(): void }[] = [];

  beforeAll(async () => {
    // Append-only, so the restarted Redis still has the jobs and the worker registered before.
    redis = await RedisServerProcess.start({ appendonly: true });
    // Keepalives (which also make a Fetch stream look for work) are a minute apart, so a job
    // delivered after the outage was found by the recovery itself, not by a periodic retry.
    server = await ServerProcess.start({ OJS_BACKEND: 'redis', REDIS_URL: redis.url, OJS_REDIS_PREFIX: prefix }, [
      '--stream-keepalive',
      '60s',
      '--heartbeat-interval',
      '1s',
      '--heartbeat-timeout',
      '10s',
    ]);
    clients = connectTo(server.address);
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(async () => {
    clients?.channel.close();
    // What the outage left in Redis keeps every invariant of the store.
    await auditThenStop(
      'the data that lived through the outage',
      () => auditRedis(redis.url, prefix),
      async () => {
        await server?.stop('SIGKILL');
        await redis?.destroy();
      },
    );
  });

  function watchHealth(service = ''): StreamReader<{ status: Serving }> {
    const abort = new AbortController();
    const reader = new StreamReader(clients.health.watch({ service }, { signal: abort.signal }), abort);
    streams.push(reader);
    return reader;
  }

  it('answers UNAVAILABLE and NOT_SERVING while Redis is away, and recovers by itself when it returns', async () => {
    const queue = `q-${randomUUID().slice(0, 8)}`;
    const worker = await TestWorker.register(clients, { queues: [queue] });
    const fetch = worker.openFetch();
    streams.push(fetch);
    // The stream is open once its first job arrives; then it waits, through the outage.
    const probe = await enqueueOne(clients, { queue });
    const [delivery] = (await fetch.nextMatching(hasDeliveries)).deliveries;
    expect(delivery!.job!.id).toBe(probe.id);
    const beat = worker.openBeat();
    streams.push(beat);
    await beat.beat();
    const health = watchHealth();
    expect((await health.next()).status).toBe(Serving.SERVING);

    await redis.stop();

    // The Watch stream hears of it, and Check says the same, overall and per service.
    expect((await health.next()).status).toBe(Serving.NOT_SERVING);
    expect((await clients.health.check({ service: '' }, promptly())).status).toBe(Serving.NOT_SERVING);
    expect((await clients.health.check({ service: 'ojs.server.v1.JobService' }, promptly())).status).toBe(Serving.NOT_SERVING);
    // Calls fail at once, as retryable UNAVAILABLE.
    const unavailable = { code: Status.UNAVAILABLE, reason: 'unavailable', metadata: objectContaining({ retryable: 'true' }) };
    expect(await rpcError(clients.jobs.enqueue({ jobs: [jobSpec({ queue })] }, promptly()))).toMatchObject(unavailable);
    expect(await rpcError(clients.jobs.getJob({ jobId: probe.id }, promptly()))).toMatchObject(unavailable);
    expect(await rpcError(clients.operator.listQueues({}, promptly()))).toMatchObject(unavailable);
    expect(await rpcError(worker.ack(delivery!))).toMatchObject(unavailable);
    // A beat cannot be recorded: the Beat stream ends with UNAVAILABLE and the worker will reconnect.
    beat.send({
      workerId: worker.workerId,
      state: WorkerState.WORKER_STATE_RUNNING,
      activeJobs: 1,
      activeJobIds: [probe.id],
      sequence: 99,
    });
    expect(await rpcError(beat.responses.next())).toMatchObject({ code: Status.UNAVAILABLE });
    await server.waitForLog((l) => l.msg.startsWith('store unreachable'), 'that the store is unreachable');
    expect(server.isRunning).toBe(true);

    await redis.startAgain();

    expect((await health.next()).status).toBe(Serving.SERVING);
    await server.waitForLog((l) => l.msg.startsWith('store reachable again'), 'that the store is back');
    // The Fetch stream that waited through the outage receives a job enqueued now: through the
    // jobsAvailable signal, so the replica must be subscribed again before it says SERVING.
    const job = await enqueueOne(clients, { queue });
    const delivered = await within(
      fetch.nextMatching(hasDeliveries),
      5_000,
      'the job to reach the Fetch stream that waited through the outage',
    );
    expect(delivered.deliveries.map((d) => d.job!.id)).toEqual([job.id]);
    expect(await getJob(clients, job.id)).toMatchObject({ state: JobState.JOB_STATE_ACTIVE, workerId: worker.workerId });
    // The worker beats again on a new stream, and the job it held through the outage is still its own.
    const again = worker.openBeat();
    streams.push(again);
    expect((await again.beat(WorkerState.WORKER_STATE_RUNNING, [probe.id, job.id])).cancelledJobIds).toEqual([]);
    expect(server.isRunning).toBe(true);
  });

  it('lets a replica start while Redis is away: it listens once Redis is back', async () => {
    await redis.stop();
    let spawned!: (server: ServerProcess) => void;
    const spawnedServer = new Promise<ServerProcess>((resolve) => (spawned = resolve));
    const starting = ServerProcess.start(
      { OJS_BACKEND: 'redis', REDIS_URL: redis.url, OJS_REDIS_PREFIX: testPrefix() },
      [],
      20_000,
      spawned,
    );
    // The process tried, failed and goes on trying; it listens only once its store is reachable.
    await (await spawnedServer).waitForLog((l) => l.msg === 'store unreachable at start-up; retrying', 'that it waits for Redis');
    await redis.startAgain();
    const late = await starting;
    try {
      const lateClients = connectTo(late.address);
      expect((await lateClients.health.check({ service: '' })).status).toBe(Serving.SERVING);
      lateClients.channel.close();
    } finally {
      await late.stop('SIGKILL');
    }
  });
});
