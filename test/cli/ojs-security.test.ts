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
