import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';

/** The compiled entry point that `npm start` runs (the test command builds it first). */
const MAIN = join(__dirname, '..', '..', 'dist', 'src', 'main.js');

function startMain(args: string[]): ChildProcess {
  return spawn(process.execPath, [MAIN, '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

  it('serves the in-memory store, logs JSON, and exits 0 on SIGTERM', async () => {
    const child = startMain(['--port', '0']);
    children.push(child);
    const exited = exitOf(child);
    const lines = createInterface({ input: child.stdout! });
    const listening = await new Promise<{ port: number; backend: string; level: number }>((resolve) => {
      lines.on('line', (line) => {
        const entry = JSON.parse(line) as { msg: string; port: number; backend: string; level: number };
        if (entry.msg === 'ojs server listening') resolve(entry);
      });
    });
    expect(listening).toMatchObject({ backend: 'memory', level: 30 });
    const channel = createChannel(`127.0.0.1:${listening.port}`);
    const health = createClient(HealthDefinition, channel);
    expect((await health.check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    channel.close();
    process.kill(child.pid!, 'SIGTERM');
    expect((await exited).code).toBe(0);
  });
});
