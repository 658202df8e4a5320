import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { ojs } from './ojs-command';

/**
 * The `ojs` binary against a peer that speaks HTTP/2 and takes every call
 * but never answers one (a wedged server, a proxy holding requests): each
 * unary call has a deadline (--call-timeout), so the command exits with the
 * unavailable code instead of hanging.
 */
describe('the ojs command against a server that never answers', () => {
  let silent: Http2Server;
  let address: string;
  const sessions = new Set<Http2Session>();
  const streams: ServerHttp2Stream[] = [];

  beforeAll(async () => {
    // h2c, as the CLI speaks without TLS: the connection and its streams are accepted, and left unanswered.
    silent = createServer();
    silent.on('session', (session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
    });
    silent.on('stream', (stream) => streams.push(stream));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve, reject) => silent.close((error) => (error === undefined ? resolve() : reject(error))));
  });

  it('gives up on a unary call after --call-timeout and exits 5, having sent the call', async () => {
    const callsBefore = streams.length;
    const started = Date.now();
    const run = await ojs(address, ['--call-timeout', '300ms', 'queues', 'list']);
    expect([run.code, run.stdout]).toEqual([5, '']);
    expect(run.stderr).toContain('DEADLINE_EXCEEDED');
    // The call reached the peer (the deadline, not a refused connection, ended it), and ended long before the 15 s kill.
    expect(streams.length).toBe(callsBefore + 1);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('takes the deadline from OJS_CALL_TIMEOUT, and refuses one that is not a duration', async () => {
    const run = await ojs(address, ['jobs', 'get', '0190f5a2-0000-7000-8000-000000000000'], { OJS_CALL_TIMEOUT: '200ms' });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('DEADLINE_EXCEEDED');
    const bad = await ojs(address, ['--call-timeout', 'soon', 'queues', 'list']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--call-timeout: "soon" is not a duration');
  });

  it('gives jobs wait its own --timeout plus the call timeout before it gives up on a silent server', async () => {
    const run = await ojs(address, [
      '--call-timeout',
      '200ms',
      'jobs',
      'wait',
      '0190f5a2-0000-7000-8000-000000000000',
      '--timeout',
      '300ms',
    ]);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('DEADLINE_EXCEEDED');
  });

  it('documents the flag, its variable and its default in --help', async () => {
    const help = await ojs(address, ['--help']);
    expect(help.stdout).toMatch(/--call-timeout <duration>[^-]*\(default: "30s",\s+env: OJS_CALL_TIMEOUT\)/);
  });
});
