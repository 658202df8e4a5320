import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientError, Status, type Metadata } from 'nice-grpc';
import { RetryInfo, RichClientError } from 'nice-grpc-error-details';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import type { PrincipalLimits } from '../../src/domain/principal-limits';
import { EventWatch } from '../support/event-watch';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker, type BeatStream } from '../support/test-worker';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { eventually } from '../support/waiting';

/**
 * Per-principal limits on a real server with an auth file and real tokens.
 * Streams are WatchEvents calls (any long-lived call takes a slot); the
 * enqueue rate runs on a ManualClock, so "after the given delay" is exact.
 */

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const PRINCIPALS = {
  principals: [
    { name: 'ops', roles: ['operator'], token_sha256: sha256('ops-token') },
    { name: 'other', roles: ['operator'], token_sha256: sha256('other-token') },
    { name: 'worker', roles: ['worker'], token_sha256: sha256('worker-token') },
    // Its own limit overrides the server's: no enqueue rate.
    { name: 'bulk', roles: ['producer'], token_sha256: sha256('bulk-token'), limits: { enqueue_rate: 0 } },
  ],
};
const UNLIMITED: PrincipalLimits = { maxStreams: 0, maxConnections: 0, enqueueRatePerSecond: 0, enqueueBurst: 0 };
const jobs = (count: number) => ({ jobs: Array.from({ length: count }, () => ({ type: 'limits.test' })) });

describe('per-principal limits', () => {
  let dir: string;
  let server: TestServer;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-limits-'));
    writeFileSync(join(dir, 'principals.json'), JSON.stringify(PRINCIPALS));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => server.stop());

  const start = async (limits: Partial<PrincipalLimits>, clock?: ManualClock): Promise<void> => {
    server = await TestServer.start({
      security: { authFile: join(dir, 'principals.json'), reloadIntervalMs: 60_000 },
      principalLimits: { ...UNLIMITED, ...limits },
      // WatchEvents streams send a keepalive soon after they open, which tells the test the server admitted them.
      protocol: { streamKeepaliveMs: 20 },
      ...(clock === undefined ? {} : { clock }),
    });
  };

  it('refuses a stream past the principal limit with RESOURCE_EXHAUSTED rate_limited, and a cancelled stream frees its slot', async () => {
    await start({ maxStreams: 2 });
    const ops = server.connect({ token: 'ops-token' });
    const watches = [await openWatch(ops), await openWatch(ops)];

    const refused = await rpcError(EventWatch.open(ops).ended());
    expect(refused).toMatchObject({
      code: Status.RESOURCE_EXHAUSTED,
      reason: 'rate_limited',
      domain: 'openjobspec.org',
      metadata: { limit: 'streams', max: '2', retryable: 'true' },
    });
    // WaitForJob long polls hold a slot too; short unary calls take none.
    const job = (await ops.jobs.enqueue(jobs(1))).jobs[0]!;
    expect(await rpcError(ops.jobs.waitForJob({ jobId: job.id, maxWait: { seconds: 60, nanos: 0 } }))).toMatchObject({
      code: Status.RESOURCE_EXHAUSTED,
      metadata: { limit: 'streams' },
    });
    expect(await ops.operator.listQueues({})).toBeDefined();
    // Another principal's streams are its own.
    const others = [await openWatch(server.connect({ token: 'other-token' })), await openWatch(server.connect({ token: 'other-token' }))];

    watches[0]!.close();
    const reopened = await eventually(
      () => openWatch(ops),
      () => 'a stream of ops once one of its streams was cancelled',
    );
    for (const watch of [reopened, watches[1]!, ...others]) watch.close();
  });

  it('holds a slot for each worker stream (served without nice-grpc) until it ends, however it ends', async () => {
    await start({ maxStreams: 2 });
    const worker = await TestWorker.register(server.connect({ token: 'worker-token' }));
    // A Beat stream is admitted once its first beat is answered, a Fetch stream once its first keepalive comes.
    const openBeat = async (): Promise<BeatStream> => {
      const beat = worker.openBeat();
      await beat.beat();
      return beat;
    };
    const beat = await openBeat();
    const fetch = worker.openFetch({ maxWaitMs: 60_000 });
    await fetch.next();

    const refusal = {
      code: Status.RESOURCE_EXHAUSTED,
      reason: 'rate_limited',
      metadata: { limit: 'streams', max: '2', retryable: 'true' },
    };
    const refusedBeat = worker.openBeat();
    refusedBeat.send({ workerId: worker.workerId, state: WorkerState.WORKER_STATE_RUNNING, activeJobs: 0, activeJobIds: [], sequence: 1 });
    expect(await rpcError(refusedBeat.responses.next())).toMatchObject(refusal);
    expect(await rpcError(worker.openFetch().next())).toMatchObject(refusal);

    // Cancelled by the client.
    fetch.close();
    const second = await eventually(openBeat, () => 'a Beat stream once the Fetch stream was cancelled');
    // Ended by the client's half-close, answered with OK.
    second.end();
    await second.responses.ended();
    const third = await eventually(openBeat, () => 'a Beat stream once another ended by half-close');
    // Ended by the server with an error.
    third.send({ workerId: 'someone-else', state: WorkerState.WORKER_STATE_RUNNING, activeJobs: 0, activeJobIds: [], sequence: 99 });
    expect(await rpcError(third.responses.nextMatching(() => false))).toMatchObject({ code: Status.INVALID_ARGUMENT });
    const fourth = await eventually(openBeat, () => 'a Beat stream once another was ended by the server');
    for (const open of [beat, fourth]) open.close();
  });

  it('counts the connections a principal makes calls on, refuses one more, and forgets a connection when it closes', async () => {
    await start({ maxConnections: 2 });
    const [first, second, third] = [0, 1, 2].map(() => server.connect({ token: 'ops-token', isOwnConnection: true })) as [
      Clients,
      Clients,
      Clients,
    ];
    await first.operator.listQueues({});
    await second.operator.listQueues({});
    expect(await rpcError(third.operator.listQueues({}))).toMatchObject({
      code: Status.RESOURCE_EXHAUSTED,
      reason: 'rate_limited',
      metadata: { limit: 'connections', max: '2' },
    });
    // Calls on the connections it already uses pass, and other principals are not affected.
    await first.operator.listQueues({});
    await server.connect({ token: 'other-token', isOwnConnection: true }).operator.listQueues({});

    first.channel.close();
    await eventually(
      () => third.operator.listQueues({}),
      () => 'a call of ops on a third connection once its first connection closed',
    );
  });

  it('refuses enqueues past the rate with RetryInfo and retry-after, and admits again after the delay it gave', async () => {
    const clock = new ManualClock();
    await start({ enqueueRatePerSecond: 2, enqueueBurst: 4 }, clock);
    const ops = server.connect({ token: 'ops-token' });
    // The burst: four jobs at once.
    expect((await ops.jobs.enqueue(jobs(4))).jobs).toHaveLength(4);

    let trailer: Metadata | undefined;
    const refusal = await ops.jobs.enqueue(jobs(1), { onTrailer: (t) => (trailer = t) }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RichClientError);
    expect((refusal as ClientError).code).toBe(Status.RESOURCE_EXHAUSTED);
    const retryInfo = (refusal as RichClientError).extra.find((d): d is RetryInfo => d.$type === RetryInfo.$type);
    expect(retryInfo?.retryDelay).toMatchObject({ seconds: 0, nanos: 500_000_000 });
    expect(trailer?.get('retry-after')).toBe('0.500');
    expect((await rpcError(ops.jobs.enqueue(jobs(1)))).metadata).toMatchObject({ limit: 'enqueue_rate', max: '2' });

    clock.advance(499);
    expect((await rpcError(ops.jobs.enqueue(jobs(1)))).reason).toBe('rate_limited');
    clock.advance(1);
    expect((await ops.jobs.enqueue(jobs(1))).jobs).toHaveLength(1);
    // A batch larger than the burst passes on a full bucket (never refused for ever), then the debt is paid first.
    clock.advance(10_000);
    expect((await ops.jobs.enqueue(jobs(10))).jobs).toHaveLength(10);
    clock.advance(2_000);
    expect((await rpcError(ops.jobs.enqueue(jobs(1)))).reason).toBe('rate_limited');
    // A principal whose auth-file entry turns the rate off is not limited.
    expect((await server.connect({ token: 'bulk-token' }).jobs.enqueue(jobs(20))).jobs).toHaveLength(20);
  });

  it("keeps answering another principal's calls and health checks while one principal floods at its limits", async () => {
    const clock = new ManualClock();
    await start({ maxStreams: 20, enqueueRatePerSecond: 10, enqueueBurst: 10 }, clock);
    const flooder = server.connect({ token: 'ops-token' });
    const other = server.connect({ token: 'other-token' });
    const health = server.connect().health;

    const watches = await Promise.all(Array.from({ length: 20 }, () => openWatch(flooder)));
    const extraStreams = Array.from({ length: 20 }, () => rpcError(EventWatch.open(flooder).ended()));
    const enqueues = Array.from({ length: 200 }, () =>
      flooder.jobs.enqueue(jobs(1)).then(
        () => 'admitted' as const,
        (error: unknown) => (error instanceof ClientError && error.code === Status.RESOURCE_EXHAUSTED ? ('refused' as const) : error),
      ),
    );
    const answers = [];
    for (let i = 0; i < 10; i++) {
      answers.push((await other.jobs.enqueue(jobs(1))).jobs.length);
      answers.push((await other.operator.listQueues({})).queues.length > 0 ? 1 : 0);
      expect(await health.check({ service: '' })).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    }
    // 'other' enqueued its own burst of 10 on a clock that stands still: its bucket is its own, not the flooder's.
    expect(answers.filter((a) => a === 1)).toHaveLength(20);
    const outcomes = await Promise.all(enqueues);
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(190);
    for (const refusal of await Promise.all(extraStreams)) expect(refusal.metadata).toMatchObject({ limit: 'streams' });
    for (const watch of watches) watch.close();
  });
});

describe('streams per connection', () => {
  let server: TestServer;
  afterEach(() => server.stop());

  it('announces the limit in HTTP/2 SETTINGS and refuses a stream beyond it with REFUSED_STREAM', async () => {
    server = await TestServer.start({ connections: { maxAgeMs: 0, maxAgeGraceMs: 0, minPingIntervalMs: 0, maxStreams: 2 } });
    const session: ClientHttp2Session = connect(`http://${server.address}`);
    session.on('error', () => undefined);
    const settings = new Promise<{ maxConcurrentStreams?: number }>((resolve) => session.once('remoteSettings', resolve));
    await new Promise((resolve) => session.once('connect', resolve));
    // Streams opened before the server's SETTINGS arrive: a client that waited for them would hold the third back itself.
    const codes = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<number | 'open'>((resolve) => {
            const stream = session.request({
              ':method': 'POST',
              ':path': '/grpc.health.v1.Health/Watch',
              'content-type': 'application/grpc',
              te: 'trailers',
            });
            stream.on('error', () => undefined);
            stream.on('close', () => resolve(stream.rstCode));
            // The first two are answered (SERVING) and stay open.
            stream.once('data', () => resolve('open'));
            stream.end(Buffer.from([0, 0, 0, 0, 0]));
          }),
      ),
    );
    expect(codes).toEqual(['open', 'open', constants.NGHTTP2_REFUSED_STREAM]);
    expect((await settings).maxConcurrentStreams).toBe(2);
    session.destroy();
  });
});

function openWatch(clients: Clients): Promise<EventWatch> {
  return EventWatch.open(clients).opened();
}
