import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { MAX_PING_STRIKES } from '../../lib/ping-police';
import { rawHealthCheck } from '../support/raw-health-check';
import { shareServer } from '../support/shared-server';

/**
 * grpc-js answers every ping; the server polices them (lib/ping-police.ts)
 * with the default policy: pings at least 5 s apart unless the server wrote
 * something in between. The clients here are raw HTTP/2 connections, so the
 * test controls every frame.
 */

/** More pings than any policy lets through: the flood is bounded, and a server that never closes it fails the test. */
const FLOOD_PINGS = 200;

interface Flood {
  /** Pings the server answered before it closed the connection. */
  answered: number;
  goaway: { code: number; debug: string } | undefined;
}

async function rawConnection(address: string): Promise<ClientHttp2Session> {
  const session = connect(`http://${address}`);
  // Errors (the server closing under a ping) surface through the pings and 'goaway'; never unhandled.
  session.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  return session;
}

const ping = (session: ClientHttp2Session): Promise<boolean> =>
  new Promise((resolve) => {
    try {
      if (!session.ping((error) => resolve(error === null))) resolve(false);
    } catch {
      resolve(false);
    }
  });

/** Pings as fast as the answers come, until the server closes the connection or FLOOD_PINGS were answered. */
async function flood(address: string): Promise<Flood> {
  const session = await rawConnection(address);
  const result: Flood = { answered: 0, goaway: undefined };
  session.once('goaway', (code: number, _lastStreamId: number, data?: Buffer) => {
    result.goaway = { code, debug: data?.toString() ?? '' };
  });
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  while (result.answered < FLOOD_PINGS && !session.closed && !session.destroyed) {
    if (!(await ping(session))) break;
    result.answered += 1;
  }
  session.destroy();
  await closed;
  return result;
}

describe('keepalive ping policing', () => {
  const shared = shareServer();

  it('closes a connection that pings in a tight loop with GOAWAY ENHANCE_YOUR_CALM too_many_pings', async () => {
    const result = await flood(shared.server.address);
    expect(result.goaway).toEqual({ code: constants.NGHTTP2_ENHANCE_YOUR_CALM, debug: 'too_many_pings' });
    // The first ping, its strikes and the ping that closes the connection (nghttp2 acknowledges pings itself).
    expect(result.answered).toBeLessThanOrEqual(MAX_PING_STRIKES + 2);
    expect(shared.server.logger.entries).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'closed a connection that pinged too often (too_many_pings)' }),
    );
  });

  it('keeps answering other clients while connections flood it with pings, each flood cut after a bounded number of answers', async () => {
    const { health } = shared.clients;
    await health.check({ service: '' });
    const floods = Promise.all(Array.from({ length: 20 }, () => flood(shared.server.address)));
    for (let i = 0; i < 20; i++) {
      expect(await health.check({ service: '' })).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    }
    const results = await floods;
    expect(results.map((r) => r.goaway?.debug)).toEqual(results.map(() => 'too_many_pings'));
    // What keeps the others answering: a flood costs the server a bounded number of answers, however long it pings.
    // (How fast the others are answered meanwhile is for a benchmark, not a timed assertion.)
    for (const result of results) expect(result.answered).toBeLessThanOrEqual(MAX_PING_STRIKES + 2);
  });

  it('lets a client ping after every answer it receives, as clients measuring bandwidth do', async () => {
    const session = await rawConnection(shared.server.address);
    let goaway: number | undefined;
    session.once('goaway', (code: number) => (goaway = code));
    try {
      for (let round = 0; round < 20; round++) {
        await rawHealthCheck(session);
        // Two pings per answer: the first is forgiven by the answer, the second is one strike, never three.
        expect(await ping(session)).toBe(true);
        expect(await ping(session)).toBe(true);
      }
      expect(goaway).toBeUndefined();
    } finally {
      session.destroy();
    }
  });
});
