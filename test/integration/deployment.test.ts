import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus as Serving } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { projectRoot } from '../../src/project-root';
import { LIVENESS_SERVICE } from '../../src/transport/grpc/health-server';
import { JsonLinesProcess } from '../../tools/json-lines-process';

const root = projectRoot();

/** The last ENTRYPOINT of the Dockerfile, which must be in exec form (a JSON array). */
function imageEntrypoint(): string[] {
  const line = readFileSync(join(root, 'Dockerfile'), 'utf8')
    .split('\n')
    .findLast((l) => l.startsWith('ENTRYPOINT'))!;
  return JSON.parse(line.slice('ENTRYPOINT'.length).trim()) as string[];
}

const seconds = (duration: string): number => Number(/^(\d+)s$/.exec(duration)![1]);

/** The parts of the manifests these tests read. */
interface Container {
  command?: string[];
  env: { name: string; value: string }[];
  lifecycle?: { preStop: { exec: { command: string[] } } };
  readinessProbe?: unknown;
  livenessProbe?: unknown;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: { template?: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } };
}
interface Compose {
  services: Record<string, { stop_grace_period: string; environment: Record<string, string>; entrypoint?: string[] }>;
}

/** graceful-shutdown.md 4.3 and 8: the image and the manifests deliver signals and allow the grace periods. */
describe('deployment', () => {
  it('starts the image command as the process that receives SIGTERM, and that process shuts down cleanly', async () => {
    const [command, ...args] = imageEntrypoint();
    expect(command).toBe('node');
    // No Docker engine here: run the same command from the same working directory layout.
    const server = new JsonLinesProcess('the image command', process.execPath, [...args, '--host', '127.0.0.1', '--port', '0'], {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'production' },
    });
    await server.waitFor((l) => l['msg'] === 'ojs server listening', 'that it listens');
    expect(await server.stop('SIGTERM')).toBe(0);
    await server.output;
    expect(server.lines.find((l) => l['msg'] === 'shutting down')).toMatchObject({ signal: 'SIGTERM', pid: server.pid });
    expect(server.lines.at(-1)).toMatchObject({ msg: 'stopped' });
  });

  it("serves the probes' plaintext health port from the image command, given --health-port as the manifest does", async () => {
    const [, ...args] = imageEntrypoint();
    const server = new JsonLinesProcess(
      'the image command',
      process.execPath,
      [...args, '--host', '127.0.0.1', '--port', '0', '--health-port', '0'],
      { cwd: root, env: { ...process.env, NODE_ENV: 'production' } },
    );
    try {
      const listening = await server.waitFor((l) => l['msg'] === 'ojs server listening', 'that it listens');
      expect(listening['healthPort']).toEqual(expect.any(Number));
      expect(listening['healthPort']).not.toBe(listening['port']);
      const channel = createChannel(`127.0.0.1:${String(listening['healthPort'])}`);
      const health = createClient(HealthDefinition, channel);
      try {
        for (const service of ['', LIVENESS_SERVICE])
          expect([service, (await health.check({ service }, { signal: AbortSignal.timeout(3_000) })).status]).toEqual([
            service,
            Serving.SERVING,
          ]);
      } finally {
        channel.close();
      }
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
      await server.output;
    }
  });

  it('gives Kubernetes workers their grace period plus 10 s, a quiet preStop hook and probes', () => {
    const documents = parseAllDocuments(readFileSync(join(root, 'deploy', 'kubernetes', 'ojs.yaml'), 'utf8')).map(
      (d) => d.toJSON() as Manifest,
    );
    const podOf = (name: string) => documents.find((d) => d.kind === 'Deployment' && d.metadata.name === name)!.spec.template!.spec;
    const worker = podOf('ojs-worker');
    const container = worker.containers[0]!;
    const grace = container.env.find((e) => e.name === 'OJS_SHUTDOWN_GRACE_PERIOD')!.value;
    expect(worker.terminationGracePeriodSeconds).toBe(seconds(grace) + 10);
    expect(container.command?.[0]).toBe('node');
    expect(container.lifecycle?.preStop.exec.command.join(' ')).toContain('kill -TSTP 1');
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/ready' } });
    const server = podOf('ojs-server').containers[0]!;
    // Both on the plaintext health port: the main port speaks TLS (test/integration/health-port.test.ts).
    expect(server.readinessProbe).toMatchObject({ grpc: { port: 9091, service: '' } });
    expect(server.livenessProbe).toMatchObject({ grpc: { port: 9091, service: 'liveness' } });
  });

  it('gives compose services a stop grace period covering their own', () => {
    const { services } = parse(readFileSync(join(root, 'deploy', 'docker-compose.yml'), 'utf8')) as Compose;
    const worker = services['worker']!;
    expect(seconds(worker.stop_grace_period)).toBe(seconds(worker.environment['OJS_SHUTDOWN_GRACE_PERIOD']!) + 10);
    expect(worker.entrypoint?.[0]).toBe('node');
    const server = services['server']!;
    expect(seconds(server.stop_grace_period)).toBeGreaterThan(seconds(server.environment['OJS_SHUTDOWN_TIMEOUT']!));
  });
});
