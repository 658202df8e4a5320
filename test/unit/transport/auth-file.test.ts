import { createHash } from 'node:crypto';
import { AuthFileError, parseAuthFile } from '../../../src/transport/grpc/auth-file';
import { certificateIdentities } from '../../../src/transport/grpc/peer-identity';
import { exposureWarning } from '../../../src/transport/grpc/server-security';

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

function problemsOf(document: unknown): readonly string[] {
  try {
    parseAuthFile(typeof document === 'string' ? document : JSON.stringify(document));
  } catch (error) {
    if (error instanceof AuthFileError) return error.problems;
    throw error;
  }
  return [];
}

describe('the auth file', () => {
  it('finds principals by token digest and by certificate identity', () => {
    const directory = parseAuthFile(
      JSON.stringify({
        principals: [
          { name: 'shop', roles: ['producer'], queues: ['orders'], token_sha256: [sha256('old'), sha256('new')] },
          { name: 'workers', roles: ['worker', 'reader'], client_cert: 'URI:spiffe://test/worker' },
        ],
      }),
    );
    expect(directory.findByToken('old')?.name).toBe('shop');
    expect(directory.findByToken('new')?.queues).toEqual(new Set(['orders']));
    expect(directory.findByToken('other')).toBeUndefined();
    expect(directory.findByCertificate(['CN:w', 'URI:spiffe://test/worker'])?.roles).toEqual(new Set(['worker', 'reader']));
    expect(directory.findByCertificate(['CN:workers'])).toBeUndefined();
  });

  it('reads per-principal limits and refuses unknown or malformed ones', () => {
    const directory = parseAuthFile(
      JSON.stringify({
        principals: [{ name: 'shop', roles: ['producer'], token_sha256: sha256('t'), limits: { max_streams: 5, enqueue_rate: 0.5 } }],
      }),
    );
    expect(directory.findByToken('t')?.limits).toEqual({ maxStreams: 5, enqueueRatePerSecond: 0.5 });
    const base = { name: 'shop', roles: ['producer'], token_sha256: sha256('t') };
    expect(problemsOf({ principals: [{ ...base, limits: { max_streams: 1.5, enqueue_rate: -1, burst: 3 } }] })).toEqual([
      'principals[0].limits.max_streams: expected a whole number, 0 or more',
      'principals[0].limits.enqueue_rate: expected a number, 0 or more',
      'principals[0].limits.burst: unknown limit (limits: max_streams, max_connections, enqueue_rate, enqueue_burst)',
    ]);
    expect(problemsOf({ principals: [{ ...base, limits: 3 }] })).toEqual(['principals[0].limits: expected an object']);
  });

  it('reports every problem at once', () => {
    expect(problemsOf('{')[0]).toMatch(/^not JSON/);
    expect(problemsOf({ users: [] })).toEqual(['expected an object with a "principals" list']);
    expect(
      problemsOf({
        principals: [
          { name: 'a', roles: ['root'], token_sha256: 'abc', colour: 'red' },
          { name: 'a', roles: [], client_cert: 'spiffe://x' },
          { name: '', roles: ['worker'] },
          { name: 'b', roles: ['worker'], token_sha256: sha256('t') },
          { name: 'c', roles: ['worker'], token_sha256: sha256('t') },
        ],
      }),
    ).toEqual([
      'principals[0].colour: unknown field',
      'principals[0].roles: unknown role "root" (roles: producer, worker, operator, reader, admin)',
      'principals[0].token_sha256: expected 64 lowercase hex digits',
      'principals[1].roles: expected at least one role',
      'principals[1].client_cert: expected "URI:...", "DNS:..." or "CN:..."',
      'principals[2].name: expected a non-empty string',
      'principals[2]: expected token_sha256 or client_cert',
      'name "a" is declared more than once',
      `token_sha256 ${sha256('t').slice(0, 8)}... is declared more than once`,
    ]);
  });
});

describe('client certificate identities', () => {
  it('names SAN URIs and DNS names and the subject CN, and keeps a quoted SAN whole', () => {
    expect(
      certificateIdentities({
        subject: { C: '', ST: '', L: '', O: '', OU: '', CN: 'worker-1' },
        subjectaltname: 'DNS:worker.test, IP Address:127.0.0.1, URI:"spiffe://test/a, DNS:forged", URI:spiffe://test/b',
      }),
    ).toEqual(['DNS:worker.test', 'URI:spiffe://test/a, DNS:forged', 'URI:spiffe://test/b', 'CN:worker-1']);
  });
});

describe('the exposure warning', () => {
  it.each([
    ['0.0.0.0', undefined, true],
    ['::', undefined, true],
    ['10.1.2.3', { reloadIntervalMs: 1 }, true],
    ['127.0.0.1', undefined, false],
    ['localhost', undefined, false],
    ['::1', undefined, false],
    ['0.0.0.0', { authFile: 'p.json', reloadIntervalMs: 1 }, false],
    ['0.0.0.0', { tls: { certFile: 'c', keyFile: 'k' }, reloadIntervalMs: 1 }, false],
  ])('on %s with %j: %s', (host, security, isWarned) => {
    expect(exposureWarning(host, security) !== undefined).toBe(isWarned);
  });
});
