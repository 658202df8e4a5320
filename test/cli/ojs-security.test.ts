import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { TestCertificates } from '../support/certificates';
import { TestServer } from '../support/test-server';
import { ojs, ojsJson } from './ojs-command';

const TOKEN = 'cli-operator-token';

/**
 * The `ojs` binary (dist/ must be fresh: `npm run build`, which `npm test`
 * runs first) against a server with TLS and an auth file: the CA and token
 * from flags or the environment, and the refused code when the server says no.
 */
describe('the ojs command on a secured server', () => {
  let certificates: TestCertificates;
  let server: TestServer;

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    const { certFile, keyFile } = await certificates.issueServer('server');
    const authFile = certificates.path('principals.json');
    const tokenSha256 = createHash('sha256').update(TOKEN).digest('hex');
    writeFileSync(authFile, JSON.stringify({ principals: [{ name: 'on-call', roles: ['operator'], token_sha256: tokenSha256 }] }));
    server = await TestServer.start({ security: { tls: { certFile, keyFile }, authFile, reloadIntervalMs: 60_000 } });
  });
  afterAll(async () => {
    await server.stop();
    certificates.remove();
  });

  it('works over TLS with --tls-ca and a token from --token or OJS_TOKEN', async () => {
    const ca = certificates.path('ca.pem');
    const [job] = await ojsJson(server.address, ['--tls-ca', ca, '--token', TOKEN, 'enqueue', 'secure.job', '-q', 'secured']);
    expect(job).toMatchObject({ type: 'secure.job', state: 'available' });
    const listed = await ojsJson(server.address, ['queues', 'list'], { OJS_TLS_CA: ca, OJS_TOKEN: TOKEN });
    expect(listed).toEqual([expect.objectContaining({ name: 'secured', available: 1 })]);
  });

  it('exits with the refused code when the token is unknown or missing', async () => {
    const ca = certificates.path('ca.pem');
    for (const token of [['--token', 'not-the-token'], []]) {
      const run = await ojs(server.address, ['--tls-ca', ca, ...token, 'queues', 'list']);
      expect([token, run.code, run.stdout]).toEqual([token, 4, '']);
      expect(run.stderr).toContain('UNAUTHENTICATED');
    }
  });

  it('exits with the unavailable code when it does not trust the server certificate', async () => {
    const run = await ojs(server.address, ['--tls', '--token', TOKEN, 'queues', 'list']);
    expect(run.code).toBe(5);
  });

  it('refuses to send a token in plaintext beyond loopback, before connecting', async () => {
    const run = await ojs('192.0.2.1:9090', ['--token', TOKEN, 'queues', 'list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('refusing to send a token in plaintext');
  });
});

/**
 * The `ojs` binary presenting a client certificate (mTLS) to a server that
 * requires one, and that knows the operator by the certificate's SAN URI.
 */
describe('the ojs command with a client certificate', () => {
  let certificates: TestCertificates;
  let server: TestServer;

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    const { certFile, keyFile } = await certificates.issueServer('server');
    await certificates.issue('cli-client', { commonName: 'on-call', altNames: ['URI:spiffe://test/on-call'] });
    const authFile = certificates.path('principals.json');
    writeFileSync(
      authFile,
      JSON.stringify({ principals: [{ name: 'on-call', roles: ['operator'], client_cert: 'URI:spiffe://test/on-call' }] }),
    );
    server = await TestServer.start({
      security: { tls: { certFile, keyFile, clientCaFile: certificates.path('ca.pem') }, authFile, reloadIntervalMs: 60_000 },
    });
  });
  afterAll(async () => {
    await server.stop();
    certificates.remove();
  });

  it('is let in with --tls-cert and --tls-key (or OJS_TLS_CERT and OJS_TLS_KEY) and acts as the principal they name', async () => {
    const [ca, cert, key] = ['ca.pem', 'cli-client.pem', 'cli-client.key'].map((file) => certificates.path(file));
    const [job] = await ojsJson(server.address, [
      '--tls-ca',
      ca!,
      '--tls-cert',
      cert!,
      '--tls-key',
      key!,
      'enqueue',
      'mtls.job',
      '-q',
      'mtls',
    ]);
    expect(job).toMatchObject({ type: 'mtls.job', state: 'available' });
    const listed = await ojsJson(server.address, ['queues', 'list'], { OJS_TLS_CA: ca!, OJS_TLS_CERT: cert!, OJS_TLS_KEY: key! });
    expect(listed).toEqual([expect.objectContaining({ name: 'mtls', available: 1 })]);
  });

  it('is turned away without a client certificate (unavailable), and refuses a certificate without its key (usage)', async () => {
    const ca = certificates.path('ca.pem');
    const anonymous = await ojs(server.address, ['--tls-ca', ca, 'queues', 'list']);
    expect([anonymous.code, anonymous.stdout]).toEqual([5, '']);

    const keyless = await ojs(server.address, ['--tls-ca', ca, '--tls-cert', certificates.path('cli-client.pem'), 'queues', 'list']);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('a client certificate needs its key');
  });
});
