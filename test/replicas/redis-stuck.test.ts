import { Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus as Serving } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { RedisServerProcess, testPrefix } from '../../tools/redis-server';
import { ServerProcess } from '../../tools/server-process';
import { enqueueOne } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { auditRedis, auditThenStop } from '../support/store-audit';
import { StreamReader } from '../support/streams';
import { connectTo, type Clients } from '../support/test-server';
import { within } from '../support/waiting';

/**
 * A Redis that keeps its connections open but answers nothing (SIGSTOP: a
 * stuck or overloaded server) is noticed: the server probes it with a short
 * timeout and says NOT_SERVING until it answers again, and calls fail with
 * UNAVAILABLE after the command timeout instead of hanging.
 */
describe('a stuck Redis', () => {
  let redis: RedisServerProcess;
  let server: ServerProcess;
  let clients: Clients;
  let health: StreamReader<{ status: Serving }> | undefined;
  const prefix = testPrefix();

  beforeAll(async () => {
    redis = await RedisServerProcess.start();
    server = await ServerProcess.start({ OJS_BACKEND: 'redis', REDIS_URL: redis.url, OJS_REDIS_PREFIX: prefix }, [
      '--redis-ping-interval',
      '100ms',
      '--redis-ping-timeout',
      '200ms',
      '--redis-command-timeout',
      '1s',
    ]);
    clients = connectTo(server.address);
  });
  afterAll(async () => {
    health?.close();
    clients?.channel.close();
    // A failed test may have left Redis stopped: the audit needs it running.
    redis?.resume();
    await auditThenStop(
      'the data written around the stall',
      () => auditRedis(redis.url, prefix),
      async () => {
        await server?.stop('SIGKILL');
        await redis?.destroy();
      },
    );
  });

  it('turns health NOT_SERVING while Redis answers nothing, and SERVING again once it answers', async () => {
    const abort = new AbortController();
    health = new StreamReader(clients.health.watch({ service: '' }, { signal: abort.signal }), abort);
    expect((await health.next()).status).toBe(Serving.SERVING);

    redis.pause();
    try {
      expect((await within(health.next(), 3_000, 'health to turn NOT_SERVING')).status).toBe(Serving.NOT_SERVING);
      expect((await clients.health.check({ service: '' }, { signal: AbortSignal.timeout(1_000) })).status).toBe(Serving.NOT_SERVING);
      // A call waits at most the command timeout, then answers as a retryable refusal.
      expect(await rpcError(enqueueOne(clients, {}))).toMatchObject({ code: Status.UNAVAILABLE, reason: 'unavailable' });
    } finally {
      redis.resume();
    }

    expect((await within(health.next(), 3_000, 'health to turn SERVING again')).status).toBe(Serving.SERVING);
    expect((await enqueueOne(clients, {})).id).not.toBe('');
    expect(server.isRunning).toBe(true);
  });
});
