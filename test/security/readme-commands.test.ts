import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestCertificates } from '../support/certificates';
import { TestServer } from '../support/test-server';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const BUF = join(ROOT, 'node_modules', '.bin', 'buf');
const TOKEN = 'readme-operator-token';
const CLIENT_IDENTITY = 'CN:readme-client';

/**
 * The README's Security block of grpcurl and buf curl lines, as shell words
 * ($OJS_TOKEN expanded): every line, its continuations joined.
 */
function readmeSecurityCommands(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const security = readme.slice(readme.indexOf('\n## Security\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(security.slice(0, security.indexOf('\n## ', 1)))?.[1] ?? '';
  return block
    .replaceAll('\\\n', ' ')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map(shellWords);
}

/** Splits a command line as sh would, for the quoting the README uses: '...', "..." with $OJS_TOKEN. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const [, single, double, bare] of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    words.push(single ?? (double ?? bare!).replaceAll('$OJS_TOKEN', TOKEN));
  }
  return words;
}

/** The words without `flag` and its value. */
function without(words: string[], flag: string): string[] {
  return words.filter((word, i) => word !== flag && words[i - 1] !== flag);
}

/** The buf curl command that does what a grpcurl command does. */
function asBufCurl(grpcurl: string[]): string[] {
  const flags = grpcurl.slice(1, -2).map((word) => ({ '-cacert': '--cacert', '-cert': '--cert', '-key': '--key' })[word] ?? word);
  const [address, method] = grpcurl.slice(-2);
  return ['buf', 'curl', '--protocol', 'grpc', ...flags, `https://${address}/${method}`];
}

/**
 * The README's TLS, mTLS and token commands, run as written (buf curl; grpcurl
 * is not installed, so its lines are checked to be the same calls) against
 * servers with TLS, with mTLS, and an auth file. Certificates by openssl,
 * named as the README names them: ca.pem, client.pem, client.key.
 */
describe("the README's security commands", () => {
  let certificates: TestCertificates;
  let tlsServer: TestServer;
  let mtlsServer: TestServer;

  beforeAll(async () => {
    certificates = await TestCertificates.create();
    const serverCert = await certificates.issueServer('server');
    await certificates.issue('client', { commonName: 'readme-client' });
    const authFile = certificates.path('principals.json');
    const tokenHash = createHash('sha256').update(TOKEN).digest('hex');
    writeFileSync(
      authFile,
      JSON.stringify({
        principals: [
          { name: 'on-call', roles: ['operator'], token_sha256: tokenHash },
          { name: 'dashboard', roles: ['operator'], client_cert: CLIENT_IDENTITY },
        ],
      }),
    );
    const tls = { certFile: serverCert.certFile, keyFile: serverCert.keyFile };
    tlsServer = await TestServer.start({ security: { tls, authFile, reloadIntervalMs: 60_000 } });
    mtlsServer = await TestServer.start({
      security: { tls: { ...tls, clientCaFile: certificates.path('ca.pem') }, authFile, reloadIntervalMs: 60_000 },
    });
  });
  afterAll(async () => {
    await tlsServer.stop();
    await mtlsServer.stop();
    certificates.remove();
  });

  /** Runs a README buf curl line against `server`, in the directory of the certificates; resolves with its output. */
  async function bufCurl(server: TestServer, words: string[]): Promise<string> {
    const args = words.slice(1).map((word) => word.replace('localhost:9090', `localhost:${server.server.port}`));
    return (await run(BUF, args, { cwd: certificates.dir, timeout: 15_000 })).stdout;
  }

  it('answers each buf curl line, over TLS with the token or over mTLS with the client certificate', async () => {
    const bufCurls = readmeSecurityCommands().filter(([command]) => command === 'buf');
    expect(bufCurls.length).toBeGreaterThanOrEqual(3);
    expect(bufCurls.some((words) => words.includes('--cert'))).toBe(true);
    for (const words of bufCurls) {
      const stdout = await bufCurl(words.includes('--cert') ? mtlsServer : tlsServer, words);
      expect([words.join(' '), typeof JSON.parse(stdout)]).toEqual([words.join(' '), 'object']);
    }
  });

  it('refuses the same calls without the token or the client certificate', async () => {
    const bufCurls = readmeSecurityCommands().filter(([command]) => command === 'buf');
    const withToken = bufCurls.find((words) => words.includes('-H'))!;
    const withCert = bufCurls.find((words) => words.includes('--cert'))!;
    // execFile's error message ends with what buf printed on stderr.
    await expect(bufCurl(tlsServer, without(withToken, '-H'))).rejects.toThrow(/unauthenticated/);
    // The server ends the handshake; buf, finding no reflection answer, reports the service missing.
    await expect(bufCurl(mtlsServer, without(without(withCert, '--cert'), '--key'))).rejects.toThrow(/failed to find service/);
  });

  it('has a grpcurl line for each buf curl line, making the same call', () => {
    const commands = readmeSecurityCommands();
    const bufCurls = commands.filter(([command]) => command === 'buf').map((words) => words.join(' '));
    const grpcurls = commands.filter(([command]) => command === 'grpcurl').map((words) => asBufCurl(words).join(' '));
    expect(grpcurls.toSorted()).toEqual(bufCurls.toSorted());
  });
});
