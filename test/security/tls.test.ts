import { copyFileSync, writeFileSync } from 'node:fs';
import { ChannelCredentials, Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { TestCertificates, type IssuedCertificate } from '../support/certificates';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';
import { eventually } from '../support/waiting';

const SERVING = HealthCheckResponse_ServingStatus.SERVING;
const RELOAD_INTERVAL_MS = 30;

describe('TLS and mTLS', () => {
  let certificates: TestCertificates;
  let serverCert: IssuedCertificate;
  let workerCert: IssuedCertificate;
  let strangerCert: IssuedCertificate;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    serverCert = await certificates.issueServer('server');
    workerCert = await certificates.issue('worker', { commonName: 'worker-1', altNames: ['URI:spiffe://test/worker'] });
    await certificates.createCa('other-ca');
    strangerCert = await certificates.issue('stranger', { commonName: 'worker-1', altNames: ['URI:spiffe://test/worker'], ca: 'other-ca' });
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop();
  });
  afterAll(() => certificates.remove());

  async function startTls(options: { clientCa?: boolean; authFile?: string } = {}): Promise<TestServer> {
    const server = await TestServer.start({
      security: {
        tls: {
          certFile: serverCert.certFile,
          keyFile: serverCert.keyFile,
          ...(options.clientCa === true ? { clientCaFile: certificates.path('ca.pem') } : {}),
        },
        ...(options.authFile === undefined ? {} : { authFile: options.authFile }),
        reloadIntervalMs: RELOAD_INTERVAL_MS,
      },
    });
    servers.push(server);
    return server;
  }

  /** Clients that trust `ca` and, when given, present `client`'s certificate. */
  function connectTls(server: TestServer, ca: string, client?: IssuedCertificate): Clients {
    const credentials =
      client === undefined
        ? ChannelCredentials.createSsl(certificates.read(ca))
        : ChannelCredentials.createSsl(
            certificates.read(ca),
            certificates.read(`${nameOf(client)}.key`),
            certificates.read(`${nameOf(client)}.pem`),
          );
    return server.connect({ credentials });
  }

  function nameOf(issued: IssuedCertificate): string {
    return issued.certFile.slice(certificates.dir.length + 1, -'.pem'.length);
  }

  it('serves TLS with the configured certificate and refuses plaintext clients', async () => {
    const server = await startTls();
    expect((await connectTls(server, 'ca.pem').health.check({ service: '' })).status).toBe(SERVING);
    expect((await rpcError(server.connect().health.check({ service: '' }))).code).toBe(Status.UNAVAILABLE);
  });

  it('refuses clients without a certificate, or with one another CA signed, when a client CA is set', async () => {
    const server = await startTls({ clientCa: true });
    expect((await connectTls(server, 'ca.pem', workerCert).health.check({ service: '' })).status).toBe(SERVING);
    expect((await rpcError(connectTls(server, 'ca.pem').health.check({ service: '' }))).code).toBe(Status.UNAVAILABLE);
    expect((await rpcError(connectTls(server, 'ca.pem', strangerCert).health.check({ service: '' }))).code).toBe(Status.UNAVAILABLE);
  });

  it("identifies a principal by its client certificate's SAN URI and applies its roles", async () => {
    const authFile = certificates.path('cert-principals.json');
    writeFileSync(
      authFile,
      JSON.stringify({ principals: [{ name: 'workers', roles: ['worker'], client_cert: 'URI:spiffe://test/worker' }] }),
    );
    const server = await startTls({ clientCa: true, authFile });
    const clients = connectTls(server, 'ca.pem', workerCert);
    await clients.workers.register({ workerId: 'cert-worker', queues: ['default'], concurrency: 1 });
    const refusal = await rpcError(clients.jobs.enqueue({ jobs: [{ type: 'a.b' }] }));
    expect(refusal).toMatchObject({ code: Status.PERMISSION_DENIED, reason: 'permission_denied', domain: 'openjobspec.org' });

    const anotherIdentity = await certificates.issue('unknown-worker', { commonName: 'nobody', altNames: ['URI:spiffe://test/nobody'] });
    const unknown = await rpcError(
      connectTls(server, 'ca.pem', anotherIdentity).workers.register({ workerId: 'w2', queues: ['default'], concurrency: 1 }),
    );
    expect(unknown).toMatchObject({ code: Status.UNAUTHENTICATED, reason: 'unauthenticated' });
  });

  it('serves rotated certificates to new connections while open streams stay up, and ignores a broken rotation', async () => {
    // The server's files are copies the test replaces, as cert-manager would.
    const [certFile, keyFile] = [certificates.path('rotating.pem'), certificates.path('rotating.key')];
    copyFileSync(serverCert.certFile, certFile);
    copyFileSync(serverCert.keyFile, keyFile);
    const server = await TestServer.start({ security: { tls: { certFile, keyFile }, reloadIntervalMs: RELOAD_INTERVAL_MS } });
    servers.push(server);
    const before = connectTls(server, 'ca.pem');
    const watch = before.health.watch({ service: '' })[Symbol.asyncIterator]();
    expect((await watch.next()).value).toMatchObject({ status: SERVING });

    await certificates.createCa('next-ca');
    const next = await certificates.issueServer('next-server', 'next-ca');
    copyFileSync(next.certFile, certFile);
    copyFileSync(next.keyFile, keyFile);
    await eventually(
      () => Promise.resolve(server.logger.entries.find((entry) => entry.message.startsWith('TLS certificates reloaded'))),
      () => 'the server to reload its certificate',
      { intervalMs: 10 },
    );

    expect((await connectTls(server, 'next-ca.pem').health.check({ service: '' })).status).toBe(SERVING);
    expect((await rpcError(connectTls(server, 'ca.pem').health.check({ service: '' }))).code).toBe(Status.UNAVAILABLE);
    // The connection made before the rotation still answers, and its stream still delivers.
    expect((await before.health.check({ service: '' })).status).toBe(SERVING);
    server.server.grpc.setServing(false);
    expect((await watch.next()).value).toMatchObject({ status: HealthCheckResponse_ServingStatus.NOT_SERVING });
    await watch.return?.();
    server.server.grpc.setServing(true);

    writeFileSync(keyFile, 'not a key');
    await eventually(
      () =>
        Promise.resolve(
          server.logger.entries.find((entry) => entry.level === 'error' && entry.message.startsWith('TLS certificate files')),
        ),
      () => 'the server to refuse the broken key',
      { intervalMs: 10 },
    );
    expect((await connectTls(server, 'next-ca.pem').health.check({ service: '' })).status).toBe(SERVING);
  });
});
