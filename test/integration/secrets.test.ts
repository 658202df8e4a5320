import { randomUUID } from 'node:crypto';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { RedisServerProcess } from '../../tools/redis-server';
import { ServerProcess } from '../../tools/server-process';
import { jobSpec } from '../support/jobs';
import { OtlpReceiver } from '../support/otlp-receiver';
import { connectTo } from '../support/test-server';

/** Everything a server process printed: its JSON log lines and its stderr. */
const printedBy = (server: ServerProcess): string => `${JSON.stringify(server.lines)}\n${server.errorOutput}`;

/**
 * The "secrets never leak": the real server process, given a Redis
 * URL with a password (right or wrong, on the command line), prints it
 * nowhere and exports it in no telemetry. Runs in the memory project only:
 * it starts a password-protected redis-server of its own.
 */
describe('secrets on the command line', () => {
  const password = `pw-${randomUUID()}`;
  let redis: RedisServerProcess;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    redis = await RedisServerProcess.start({ password });
  });
  afterAll(async () => {
    for (const server of servers) await server.kill();
    await redis.destroy();
  });

  it('never prints the Redis password while serving, losing Redis and getting it back', async () => {
    const url = `redis://default:${password}@127.0.0.1:${redis.port}`;
    const server = await ServerProcess.start({}, ['--backend', 'redis', '--redis-url', url, '--redis-ping-interval', '100ms']);
    servers.push(server);
    const channel = createChannel(server.address);
    const health = createClient(HealthDefinition, channel);
    expect((await health.check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    channel.close();
    await redis.stop();
    await server.waitForLog((l) => l.msg.startsWith('store unreachable'), 'that Redis is unreachable');
    await redis.startAgain();
    await server.waitForLog((l) => l.msg.startsWith('store reachable again'), 'that Redis is back');
    expect(await server.stop('SIGTERM')).toBe(0);
    await server.output;
    expect(printedBy(server)).not.toContain(password);
  });

  /** A wrong password (a user name, TLS or a cluster URL alike): the server retries, then exits naming the URL without it. */
  it.each([
    ['redis://default:%s@127.0.0.1:%d', 'redis://default:***@127.0.0.1'],
    ['rediss://app:%s@127.0.0.1:%d', 'rediss://app:***@127.0.0.1'],
    ['redis://:%s@127.0.0.1:%d/0', 'redis://:***@127.0.0.1'],
  ])('given %s with a wrong password, exits with an error that names the URL without it', async (template, shown) => {
    const wrong = `wrong-${randomUUID()}`;
    const url = template.replace('%s', wrong).replace('%d', String(redis.port));
    const started = ServerProcess.start({}, ['--backend', 'redis', '--redis-url', url, '--redis-connect-timeout', '1s']);
    const failure = await started.then(
      (server) => {
        servers.push(server);
        return new Error('the server started with a wrong password');
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    // ServerProcess's failure quotes all the process printed, on stdout and stderr.
    expect(failure.message).toMatch(/exited with 1 before printing that it listens/);
    expect(failure.message).toContain(`Redis at ${shown}`);
    expect(failure.message).not.toContain(wrong);
  });

  it('exports no resource attribute, nor anything else, carrying the command line', async () => {
    const secret = `cmdline-${randomUUID()}`;
    const receiver = await OtlpReceiver.start();
    try {
      const server = await ServerProcess.start(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_LOGS_EXPORTER: 'none' },
        // The memory store ignores the URL, but the command line still carries it.
        ['--redis-url', `rediss://app:${secret}@127.0.0.1:1`],
      );
      servers.push(server);
      const clients = connectTo(server.address);
      await clients.jobs.enqueue({ jobs: [jobSpec({ queue: 'secrets', type: 'secrets.check' })] });
      clients.channel.close();
      expect(await server.stop('SIGTERM')).toBe(0);
      await receiver.waitFor('a span and metrics with their resource', () => receiver.spans.length > 0 && receiver.points.length > 0);
      expect(receiver.resources.length).toBeGreaterThan(0);
      for (const resource of receiver.resources) {
        expect(resource).not.toHaveProperty(['process.command_args']);
        expect(resource).toMatchObject({ 'process.pid': server.pid, 'process.runtime.name': 'nodejs', 'service.name': 'ojs-grpc-server' });
      }
      for (const body of receiver.bodies) expect(body).not.toContain(secret);
      expect(printedBy(server)).not.toContain(secret);
    } finally {
      await receiver.close();
    }
  });
});
