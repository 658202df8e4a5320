import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { ClientError, Status } from 'nice-grpc';
import { Producer, Worker, type SecurityOptions } from '../../packages/sdk/src';
import { TestCertificates, type IssuedCertificate } from '../support/certificates';
import { RecordingLogger } from '../support/silent-logger';
import { TestServer } from '../support/test-server';
import { WorkerProcess } from '../support/worker-process';

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const PRODUCER_TOKEN = 'producer-token';
const WORKER_TOKEN = 'worker-token';

/**
 * The SDK's Worker and Producer against real servers with TLS, mTLS and an
 * auth file: certificates made by openssl, tokens checked by the server.
 */
describe('the SDK over TLS, mTLS and bearer tokens', () => {
  let certificates: TestCertificates;
  let clientCert: IssuedCertificate;
  let tlsServer: TestServer;
  let mtlsServer: TestServer;
  const closers: (() => unknown)[] = [];

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    const serverCert = await certificates.issueServer('server');
    clientCert = await certificates.issue('client', { commonName: 'sdk-worker', altNames: ['URI:spiffe://test/sdk-worker'] });
    const authFile = certificates.path('principals.json');
    writeFileSync(
      authFile,
      JSON.stringify({
        principals: [
          { name: 'shop', roles: ['producer'], token_sha256: sha256(PRODUCER_TOKEN) },
          { name: 'workers', roles: ['worker'], token_sha256: sha256(WORKER_TOKEN) },
          { name: 'cert-workers', roles: ['worker'], client_cert: 'URI:spiffe://test/sdk-worker' },
        ],
      }),
    );
    const tls = { certFile: serverCert.certFile, keyFile: serverCert.keyFile };
    tlsServer = await TestServer.start({ security: { tls, authFile, reloadIntervalMs: 60_000 } });
    mtlsServer = await TestServer.start({
      security: { tls: { ...tls, clientCaFile: certificates.path('ca.pem') }, authFile, reloadIntervalMs: 60_000 },
    });
  });
  afterEach(async () => {
    for (const close of closers.splice(0).toReversed()) await close();
  });
  afterAll(async () => {
    await tlsServer.stop();
    await mtlsServer.stop();
    certificates.remove();
  });

  function producer(server: TestServer, security: SecurityOptions): Producer {
    const made = new Producer({ address: server.address, ...security });
    closers.push(() => made.close());
    return made;
  }

  /** A started worker that echoes its args on `queue`. */
  async function worker(server: TestServer, queue: string, security: SecurityOptions): Promise<Worker> {
    const made = new Worker({ address: server.address, queues: [queue], concurrency: 1, logger: new RecordingLogger(), ...security });
    made.handle('secure.echo', async (args) => ({ echoed: args }));
    closers.push(() => made.stop({ force: true }));
    await made.start();
    return made;
  }

  it('runs a job over TLS with a token for the producer and another for the worker', async () => {
    const ca = certificates.path('ca.pem');
    await worker(tlsServer, 'secure-tls', { tls: { ca }, token: WORKER_TOKEN });
    const shop = producer(tlsServer, { tls: { ca: certificates.read('ca.pem') }, token: PRODUCER_TOKEN });
    const job = await shop.enqueue({ type: 'secure.echo', queue: 'secure-tls', args: ['over tls'] });
    expect(await shop.result(job, { timeoutMs: 10_000 })).toEqual({ echoed: ['over tls'] });
  });

  it('runs a job over mTLS, the worker known by its client certificate alone', async () => {
    const tls = { ca: certificates.path('ca.pem'), cert: clientCert.certFile, key: clientCert.keyFile };
    await worker(mtlsServer, 'secure-mtls', { tls });
    const shop = producer(mtlsServer, { tls, token: PRODUCER_TOKEN });
    const job = await shop.enqueue({ type: 'secure.echo', queue: 'secure-mtls', args: ['over mtls'] });
    expect(await shop.result(job, { timeoutMs: 10_000 })).toEqual({ echoed: ['over mtls'] });
  });

  it('takes the CA, client certificate, key and token from OJS_TLS_CA, OJS_TLS_CERT, OJS_TLS_KEY and OJS_TOKEN', async () => {
    const envWorker = await WorkerProcess.start(mtlsServer.address, {
      OJS_QUEUES: 'secure-env',
      OJS_TLS_CA: certificates.path('ca.pem'),
      OJS_TLS_CERT: clientCert.certFile,
      OJS_TLS_KEY: clientCert.keyFile,
      OJS_TOKEN: WORKER_TOKEN,
    });
    closers.push(() => envWorker.kill());
    const shop = producer(mtlsServer, {
      tls: { ca: certificates.path('ca.pem'), cert: clientCert.certFile, key: clientCert.keyFile },
      token: PRODUCER_TOKEN,
    });
    const job = await shop.enqueue({ type: 'test.echo', queue: 'secure-env', args: ['from env'] });
    expect(await shop.result(job, { timeoutMs: 10_000 })).toEqual({ echoed: ['from env'] });
  });

  it('fails at once with UNAUTHENTICATED when the token is wrong, rather than retrying', async () => {
    const tls = { ca: certificates.path('ca.pem') };
    const stranger = new Worker({
      address: tlsServer.address,
      queues: ['secure-wrong'],
      logger: new RecordingLogger(),
      tls,
      token: 'guess',
    });
    closers.push(() => stranger.stop({ force: true }));
    await expect(stranger.start()).rejects.toMatchObject({ code: Status.UNAUTHENTICATED });
    const enqueue = producer(tlsServer, { tls, token: 'guess' }).enqueue({ type: 'secure.echo', queue: 'secure-wrong' });
    await expect(enqueue).rejects.toBeInstanceOf(ClientError);
    await expect(enqueue).rejects.toMatchObject({ code: Status.UNAUTHENTICATED });
  });

  it('fails with PERMISSION_DENIED when the token belongs to a principal without the role', async () => {
    const tls = { ca: certificates.path('ca.pem') };
    const producerAsWorker = new Worker({ address: tlsServer.address, logger: new RecordingLogger(), tls, token: PRODUCER_TOKEN });
    closers.push(() => producerAsWorker.stop({ force: true }));
    await expect(producerAsWorker.start()).rejects.toMatchObject({ code: Status.PERMISSION_DENIED });
  });

  it('refuses to send a token in plaintext beyond loopback unless told to', () => {
    expect(() => new Producer({ address: 'jobs.example.org:9090', token: 'secret' })).toThrow(/refusing to send a token in plaintext/);
    expect(() => new Worker({ address: '10.0.0.7:9090', token: 'secret' })).toThrow(/allowPlaintextToken/);
    new Producer({ address: 'jobs.example.org:9090', token: 'secret', allowPlaintextToken: true }).close();
    new Producer({ address: 'localhost:9090', token: 'secret' }).close();
  });
});
