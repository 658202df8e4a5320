import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { ServerProcess } from '../../tools/server-process';

/** The compiled entry point that `npm start` runs (the test command builds it first). */
describe('the server process', () => {
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
  });

  it('refuses at start-up a heartbeat timeout shorter than three heartbeat intervals', async () => {
    await expect(ServerProcess.start({}, ['--heartbeat-interval', '5s', '--heartbeat-timeout', '10s'])).rejects.toThrow(
      /exited with 2 before printing that it listens[\s\S]*invalid configuration:\n {2}- OJS_HEARTBEAT_TIMEOUT \(--heartbeat-timeout\) \(10s\) must be at least three heartbeat intervals/,
    );
  });

  it('exports spans over OTLP when the standard OTEL_* variables name an endpoint', async () => {
    const received: string[] = [];
    let sawTransition!: () => void;
    const exported = new Promise<void>((resolve) => (sawTransition = resolve));
    const collector = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push(`${request.url} ${body}`);
        if (request.url === '/v1/traces' && body.includes('ojs.job.transition')) sawTransition();
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const server = await ServerProcess.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    });
    servers.push(server);
    const channel = createChannel(server.address);
    await createClient(JobServiceDefinition, channel).enqueue({ jobs: [{ type: 'otlp.check', args: [] }] });
    await exported;
    expect(received.find((r) => r.startsWith('/v1/traces'))).toContain('ojs.job.id');
    channel.close();
    collector.close();
  });

  it('serves the in-memory store, logs JSON, and exits 0 on SIGTERM', async () => {
    const server = await ServerProcess.start();
    servers.push(server);
    expect(server.logs.find((l) => l.msg === 'ojs server listening')).toMatchObject({
      backend: 'memory',
      level: 30,
      service: 'ojs-grpc-server',
    });
    const channel = createChannel(server.address);
    expect((await createClient(HealthDefinition, channel).check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    channel.close();
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
