import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';

/** The compiled entry point that `npm start` runs (the test command builds it first). */
const MAIN = join(__dirname, '..', '..', 'dist', 'src', 'main.js');

function startMain(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [MAIN, '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
}

interface ListeningLine {
  msg: string;
  port: number;
  backend: string;
  level: number;
}

/** Resolves with the JSON log line in which the server says it listens. */
function listeningLine(child: ChildProcess): Promise<ListeningLine> {
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve) => {
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as ListeningLine;
      if (entry.msg === 'ojs server listening') resolve(entry);
    });
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('the server process', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL');
  });

  it('refuses at start-up a heartbeat timeout shorter than three heartbeat intervals', async () => {
    const child = startMain(['--port', '0', '--heartbeat-interval', '5s', '--heartbeat-timeout', '10s']);
    children.push(child);
    const { code, stderr } = await exitOf(child);
    expect(code).toBe(2);
    expect(stderr).toContain('OJS_HEARTBEAT_TIMEOUT (--heartbeat-timeout) (10s) must be at least three heartbeat intervals');
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
    const { port: collectorPort } = collector.address() as AddressInfo;
    const child = startMain(['--port', '0'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    });
    children.push(child);
    const channel = createChannel(`127.0.0.1:${(await listeningLine(child)).port}`);
    await createClient(JobServiceDefinition, channel).enqueue({ jobs: [{ type: 'otlp.check', args: [] }] });
    await exported;
    expect(received.find((r) => r.startsWith('/v1/traces'))).toContain('ojs.job.id');
    channel.close();
    process.kill(child.pid!, 'SIGTERM');
    await exitOf(child);
    collector.close();
  });

  it('serves the in-memory store, logs JSON, and exits 0 on SIGTERM', async () => {
    const child = startMain(['--port', '0']);
    children.push(child);
    const exited = exitOf(child);
    const listening = await listeningLine(child);
    expect(listening).toMatchObject({ backend: 'memory', level: 30, service: 'ojs-grpc-server' });
    const channel = createChannel(`127.0.0.1:${listening.port}`);
    const health = createClient(HealthDefinition, channel);
    expect((await health.check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    channel.close();
    process.kill(child.pid!, 'SIGTERM');
    expect((await exited).code).toBe(0);
  });
});
