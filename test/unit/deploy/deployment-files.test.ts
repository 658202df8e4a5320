import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../../src/config/config';
import { projectRoot } from '../../../src/project-root';
import { LIVENESS_SERVICE } from '../../../src/transport/grpc/health-server';
import { SERVER_NODE_FLAGS } from '../../../tools/server-process';

const root = projectRoot();
const read = (...path: string[]): string => readFileSync(join(root, ...path), 'utf8');

/** The parts of the Kubernetes objects these tests read. */
interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  lifecycle?: { preStop?: unknown };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface KubeObject {
  kind: string;
  metadata: { name: string };
  spec: {
    selector?: { matchLabels?: Record<string, string> };
    template?: {
      metadata: { labels: Record<string, string> };
      spec: {
        securityContext?: Record<string, unknown>;
        containers: Container[];
        volumes?: { name: string; secret?: { secretName: string; optional?: boolean; items?: unknown[] } }[];
      };
    };
    maxUnavailable?: number;
    ports?: { name: string; port: number; targetPort: string }[];
  };
}
interface ComposeService {
  ports?: string[];
  healthcheck?: { test: string[] };
  entrypoint?: string[];
}

const objects = parseAllDocuments(read('deploy', 'kubernetes', 'ojs.yaml')).map((d) => d.toJSON() as KubeObject);
const deployments = objects.filter((o) => o.kind === 'Deployment');
const serverPod = deployments.find((d) => d.metadata.name === 'ojs-server')!.spec.template!;
const server = serverPod.spec.containers[0]!;
const workerPod = deployments.find((d) => d.metadata.name === 'ojs-worker')!.spec.template!;
const worker = workerPod.spec.containers[0]!;
const envOf = (container: Container, name: string) => container.env?.find((e) => e.name === name);

/** The "Kubernetes and compose that work as written", checked without a cluster or a Docker engine. */
describe('the Kubernetes manifest', () => {
  it.each(deployments.map((d) => [d.metadata.name, d] as const))('runs %s non-root, read-only, without privileges', (_name, deployment) => {
    const pod = deployment.spec.template!.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    for (const container of pod.containers) {
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(container.imagePullPolicy).toMatch(/^(IfNotPresent|Always|Never)$/);
      // A pinned tag: :latest would make IfNotPresent run whatever a node cached.
      expect(container.image).not.toMatch(/:latest$|^[^:]*$/);
      expect(Object.keys(container.resources?.requests ?? {}).toSorted()).toEqual(['cpu', 'memory']);
      expect(Object.keys(container.resources?.limits ?? {})).toContain('memory');
    }
  });

  it.each(deployments.map((d) => [d.metadata.name, d] as const))('guards %s with a PodDisruptionBudget', (name, deployment) => {
    const budget = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === name);
    expect(budget?.spec.selector?.matchLabels).toEqual(deployment.spec.template!.metadata.labels);
    expect(budget?.spec.maxUnavailable).toBe(1);
  });

  it('takes a server out of rotation when its store is unreachable, and restarts it only when the process is gone', () => {
    // Both probes ask the plaintext health port, which the manifest turns on: the main port speaks TLS.
    const healthPort = Number(envOf(server, 'OJS_HEALTH_PORT')?.value);
    expect(server.ports).toContainEqual({ name: 'health', containerPort: healthPort });
    // The overall health service ("") is NOT_SERVING while Redis is unreachable (grpc-server.ts).
    expect(server.readinessProbe).toMatchObject({ grpc: { port: healthPort, service: '' } });
    // Every other name follows the store, but for the one that says the process runs.
    expect(server.livenessProbe).toMatchObject({ grpc: { port: healthPort, service: LIVENESS_SERVICE } });
  });

  it('keeps the health port out of the Service, which carries the TLS port only', () => {
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'ojs-server')!;
    expect(service.spec.ports).toEqual([{ name: 'grpc', port: 9090, targetPort: 'grpc' }]);
  });

  it('gives the server an environment its configuration accepts, TLS and the health port included', () => {
    const env = Object.fromEntries(server.env!.map((e) => [e.name, e.value ?? 'from-a-secret']));
    const config = loadConfig(env, []);
    expect(config.security.tls).toEqual({ certFile: '/etc/ojs/tls/tls.crt', keyFile: '/etc/ojs/tls/tls.key' });
    expect(config).toMatchObject({ port: 9090, healthPort: 9091, backend: { kind: 'redis' } });
  });

  it('has workers speak TLS to the server, trusting only the CA of its Secret, with a token of their own', () => {
    expect(envOf(worker, 'OJS_TLS_CA')?.value).toBe('/etc/ojs/tls/ca.crt');
    expect(envOf(worker, 'OJS_TOKEN')).toEqual({
      name: 'OJS_TOKEN',
      valueFrom: { secretKeyRef: { name: 'ojs-worker-token', key: 'token' } },
    });
    expect(worker.volumeMounts).toEqual([{ name: 'server-ca', mountPath: '/etc/ojs/tls', readOnly: true }]);
    // The server's key stays out of worker pods.
    expect(workerPod.spec.volumes).toEqual([
      { name: 'server-ca', secret: { secretName: 'ojs-server-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    ]);
  });

  it('lets endpoints drop a stopping server before its drain, within the grace period', () => {
    const preStop = server.lifecycle?.preStop as { exec: { command: string[] } };
    expect(preStop.exec.command).toEqual(['sleep', '5']);
    const shutdown = server.env!.find((e) => e.name === 'OJS_SHUTDOWN_TIMEOUT')!.value!;
    const grace = (serverPod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds!;
    expect(grace).toBeGreaterThan(5 + Number(/^(\d+)s$/.exec(shutdown)![1]));
  });

  it('takes the Redis URL from a Secret and mounts the TLS and token Secrets read-only where the flags point', () => {
    expect(server.env!.find((e) => e.name === 'REDIS_URL')).toEqual({
      name: 'REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'ojs-redis', key: 'url' } },
    });
    expect(server.env!.find((e) => e.name === 'OJS_AUTH_FILE')?.value).toMatch(/^\/etc\/ojs\/auth\//);
    expect(server.volumeMounts).toEqual([
      { name: 'tls', mountPath: '/etc/ojs/tls', readOnly: true },
      { name: 'auth', mountPath: '/etc/ojs/auth', readOnly: true },
    ]);
    expect(serverPod.spec.volumes?.map((v) => v.secret)).toEqual([{ secretName: 'ojs-server-tls' }, { secretName: 'ojs-server-auth' }]);
    // The TLS paths it documents match the Secret's mount and cert-manager's key names.
    const manifest = read('deploy', 'kubernetes', 'ojs.yaml');
    for (const [env, file] of [
      ['OJS_TLS_CERT', 'tls.crt'],
      ['OJS_TLS_KEY', 'tls.key'],
      ['OJS_TLS_CLIENT_CA', 'ca.crt'],
    ])
      expect(manifest).toContain(`{ name: ${env}, value: /etc/ojs/tls/${file} }`);
  });

  it('says plainly that Redis must be supplied', () => {
    expect(read('deploy', 'kubernetes', 'ojs.yaml')).toMatch(/Redis is NOT deployed here: supply one/);
    expect(deployments.map((d) => d.metadata.name)).not.toContain('redis');
  });
});

describe('the compose file', () => {
  const { services } = parse(read('deploy', 'docker-compose.yml')) as { services: Record<string, ComposeService> };

  it('publishes one port, on loopback', () => {
    expect(Object.values(services).flatMap((s) => s.ports ?? [])).toEqual(['127.0.0.1:9090:9090']);
  });

  it('health-checks every service in exec form', () => {
    for (const [name, service] of Object.entries(services)) {
      expect([name, service.healthcheck?.test[0]]).toEqual([name, 'CMD']);
    }
  });
});

describe('npm start', () => {
  it("runs the server with the Node flags the image and the tests' server processes give it", () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(scripts['start']).toBe(`npm run build --silent && node ${SERVER_NODE_FLAGS.join(' ')} dist/src/main.js`);
  });
});

describe('the image', () => {
  const dockerfile = read('Dockerfile');

  it('builds on Node 22 LTS in two stages and runs as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m);
    expect(dockerfile.match(/^FROM \$\{NODE_IMAGE\}/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
  });

  it("starts in exec form, so node is PID 1 and receives SIGTERM, with the server's Node flags", () => {
    const entrypoint = dockerfile.split('\n').findLast((l) => l.startsWith('ENTRYPOINT'))!;
    expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length))).toEqual(['node', ...SERVER_NODE_FLAGS, 'dist/src/main.js']);
  });

  it('keeps build output, dependencies, tests and version control out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'test', '*.log']));
  });
});
