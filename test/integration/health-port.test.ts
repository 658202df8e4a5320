import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ChannelCredentials, Metadata, Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus as Serving } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import { LIVENESS_SERVICE } from '../../src/transport/grpc/health-server';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { RawCaller } from '../fuzz/raw-caller';
import { TestCertificates } from '../support/certificates';
import { jobSpec } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { StreamReader } from '../support/streams';
import { connectTo, TestServer, type Clients } from '../support/test-server';

/** A bound on calls that must answer at once: a hang fails the test instead of stalling it. */
const promptly = (): { signal: AbortSignal } => ({ signal: AbortSignal.timeout(3_000) });

/**
 * The plaintext health-only port (--health-port) that kubelet's gRPC probes
 * use while the main port speaks TLS: it answers from the main port's
 * health, follows the store, stays open when health on the main port needs
 * a principal, serves nothing else, and stops with the server. The store is
 * Redis on a redis-server of the test's own, stopped to make it unreachable;
 * so the test runs in the memory project only (jest.config.js).
 */
describe('the health port', () => {
  let certificates: TestCertificates;
  let redis: RedisServerProcess;
  let server: TestServer;
  let probe: Clients;
  const streams: StreamReader<unknown>[] = [];

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    const serverCert = await certificates.issueServer('server');
    const authFile = certificates.path('principals.json');
    const tokenSha256 = createHash('sha256').update('reader-token').digest('hex');
    writeFileSync(authFile, JSON.stringify({ principals: [{ name: 'reader', roles: ['reader'], token_sha256: tokenSha256 }] }));
    redis = await RedisServerProcess.start();
    server = await TestServer.start({
      // Redis is asked every 50 ms whether it answers, so its loss shows at once.
      store: () => RedisJobStore.connect({ url: redis.url, prefix: testPrefix(), pingIntervalMs: 50, pingTimeoutMs: 200 }),
      security: {
        tls: { certFile: serverCert.certFile, keyFile: serverCert.keyFile },
        authFile,
        healthAccess: 'authenticated',
        reloadIntervalMs: 60_000,
      },
      healthPort: 0,
    });
    probe = connectTo(healthAddress());
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(async () => {
    probe?.channel.close();
    await server?.stop();
    await redis?.destroy();
    certificates?.remove();
  });

  function healthAddress(): string {
    return `127.0.0.1:${server.server.grpc.healthPort!}`;
  }

  /** Clients of the main port over TLS. */
  function connectTls(token?: string): Clients {
    return server.connect({
      credentials: ChannelCredentials.createSsl(certificates.read('ca.pem')),
      ...(token === undefined ? {} : { token }),
    });
  }

  function watch(service: string): StreamReader<{ status: Serving }> {
    const abort = new AbortController();
    const reader = new StreamReader(probe.health.watch({ service }, { signal: abort.signal }), abort);
    streams.push(reader);
    return reader;
  }

  it('answers plaintext health checks while the main port speaks TLS and wants a principal for them', async () => {
    expect((await probe.health.check({ service: '' }, promptly())).status).toBe(Serving.SERVING);
    expect((await probe.health.check({ service: 'ojs.server.v1.JobService' }, promptly())).status).toBe(Serving.SERVING);
    expect((await probe.health.check({ service: LIVENESS_SERVICE }, promptly())).status).toBe(Serving.SERVING);
    // The main port: no plaintext, and over TLS no health without a principal.
    expect((await rpcError(server.connect().health.check({ service: '' }, promptly()))).code).toBe(Status.UNAVAILABLE);
    expect((await rpcError(connectTls().health.check({ service: '' }, promptly()))).code).toBe(Status.UNAUTHENTICATED);
    expect((await connectTls('reader-token').health.check({ service: '' }, promptly())).status).toBe(Serving.SERVING);
  });

  it('says NOT_SERVING while the store is unreachable, liveness SERVING all along, and SERVING again when it returns', async () => {
    const overall = watch('');
    expect((await overall.next()).status).toBe(Serving.SERVING);

    await redis.stop();

    expect((await overall.next()).status).toBe(Serving.NOT_SERVING);
    expect((await probe.health.check({ service: '' }, promptly())).status).toBe(Serving.NOT_SERVING);
    expect((await probe.health.check({ service: 'ojs.server.v1.WorkerService' }, promptly())).status).toBe(Serving.NOT_SERVING);
    expect((await probe.health.check({ service: LIVENESS_SERVICE }, promptly())).status).toBe(Serving.SERVING);

    await redis.startAgain();

    expect((await overall.next()).status).toBe(Serving.SERVING);
  });

  it('serves nothing but health: every other method, reflection included, is UNIMPLEMENTED', async () => {
    const withToken = new Metadata().set('authorization', 'Bearer reader-token');
    expect((await rpcError(probe.jobs.enqueue({ jobs: [jobSpec()] }, promptly()))).code).toBe(Status.UNIMPLEMENTED);
    expect((await rpcError(probe.operator.listQueues({}, { ...promptly(), metadata: withToken }))).code).toBe(Status.UNIMPLEMENTED);
    expect((await rpcError(probe.workers.register({}, promptly()))).code).toBe(Status.UNIMPLEMENTED);
    const caller = new RawCaller(healthAddress());
    try {
      const plan = { cancelOnMessage: true };
      for (const version of ['v1', 'v1alpha']) {
        const path = `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`;
        expect([path, (await caller.bidiStream(path, [new Uint8Array()], 3_000, plan)).code]).toEqual([path, Status.UNIMPLEMENTED]);
      }
    } finally {
      caller.close();
    }
  });

  it('stops with the server, ending its Watch streams, liveness SERVING to the end', async () => {
    const overall = watch('');
    const liveness = watch(LIVENESS_SERVICE);
    expect((await overall.next()).status).toBe(Serving.SERVING);
    expect((await liveness.next()).status).toBe(Serving.SERVING);
    await server.server.stop(1_000);
    // The drain turned readiness NOT_SERVING first; then the port closed under the streams.
    expect((await overall.next()).status).toBe(Serving.NOT_SERVING);
    expect((await rpcError(overall.next())).code).toBe(Status.CANCELLED);
    // The process is stopping, not broken: liveness never said otherwise.
    expect((await rpcError(liveness.next())).code).toBe(Status.CANCELLED);
    const late = connectTo(healthAddress());
    try {
      expect((await rpcError(late.health.check({ service: '' }, promptly()))).code).toBe(Status.UNAVAILABLE);
    } finally {
      late.channel.close();
    }
  });
});
