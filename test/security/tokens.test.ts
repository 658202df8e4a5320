import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { rpcError } from '../support/rpc-error';
import { TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const ENQUEUE = { jobs: [{ type: 'token.test' }] };

describe('bearer tokens', () => {
  let dir: string;
  let authFile: string;
  let server: TestServer;

  function writePrincipals(tokens: string[]): void {
    writeFileSync(authFile, JSON.stringify({ principals: [{ name: 'shop', roles: ['producer'], token_sha256: tokens.map(sha256) }] }));
  }

  /** Waits for the server to log that it read the auth file again, `count` times in all. */
  function reloads(level: 'info' | 'error', count: number): Promise<unknown> {
    const matching = (): number => server.logger.entries.filter((e) => e.level === level && e.message.startsWith('auth file')).length;
    return eventually(
      () => Promise.resolve(matching() >= count ? true : undefined),
      () => `${count} auth file reload(s) logged at ${level}`,
      { intervalMs: 10 },
    );
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ojs-auth-'));
    authFile = join(dir, 'principals.json');
    writePrincipals(['first-token']);
    server = await TestServer.start({ security: { authFile, reloadIntervalMs: 20 } });
  });
  afterEach(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses calls without a token or with an unknown one alike, with UNAUTHENTICATED and ErrorInfo', async () => {
    const missing = await rpcError(server.connect().jobs.enqueue(ENQUEUE));
    const wrong = await rpcError(server.connect({ token: 'second-token' }).jobs.enqueue(ENQUEUE));
    const notBearer = await rpcError(
      server.connect().jobs.enqueue(ENQUEUE, { metadata: Metadata({ authorization: 'Basic Zmlyc3QtdG9rZW4=' }) }),
    );
    for (const refusal of [missing, wrong, notBearer]) {
      expect(refusal).toEqual(missing);
      expect(refusal).toMatchObject({ code: Status.UNAUTHENTICATED, reason: 'unauthenticated', domain: 'openjobspec.org' });
    }
  });

  it('accepts the token as a bearer token or as x-ojs-api-key, and leaves health checks open', async () => {
    expect((await server.connect({ token: 'first-token' }).jobs.enqueue(ENQUEUE)).jobs).toHaveLength(1);
    const apiKey = Metadata({ 'x-ojs-api-key': 'first-token' });
    expect((await server.connect().jobs.enqueue(ENQUEUE, { metadata: apiKey })).jobs).toHaveLength(1);
    expect((await server.connect().health.check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it('follows the auth file as tokens rotate, and keeps the last good file when a new one is broken', async () => {
    const first = server.connect({ token: 'first-token' });
    const second = server.connect({ token: 'second-token' });
    writePrincipals(['first-token', 'second-token']);
    await reloads('info', 1);
    expect((await first.jobs.enqueue(ENQUEUE)).jobs).toHaveLength(1);
    expect((await second.jobs.enqueue(ENQUEUE)).jobs).toHaveLength(1);

    writePrincipals(['second-token']);
    await reloads('info', 2);
    expect((await rpcError(first.jobs.enqueue(ENQUEUE))).code).toBe(Status.UNAUTHENTICATED);

    writeFileSync(authFile, '{"principals": [{"name": "shop", "roles": ["superuser"]}]}');
    await reloads('error', 1);
    expect((await second.jobs.enqueue(ENQUEUE)).jobs).toHaveLength(1);
  });
});
