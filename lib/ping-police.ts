import { constants, type Http2Session } from 'node:http2';

/** Bytes of one PING acknowledgement on the wire: a 9-byte frame header and 8 bytes of payload. */
const PING_ACK_BYTES = 17;
/** Bad pings a connection is forgiven before it is closed: the default of gRPC core and grpc-go. */
export const MAX_PING_STRIKES = 2;
/** What gRPC clients read in the GOAWAY to back their keepalive off (gRFC A8). */
const TOO_MANY_PINGS = Buffer.from('too_many_pings');

/**
 * Polices the pings a peer sends on `session`, as gRPC core and grpc-go do
 * and grpc-js does not (it answers every ping, thousands a second).
 *
 * A ping is bad when it comes less than `minIntervalMs` after the peer's
 * previous ping and the server has written nothing since but the answers to
 * pings. Whatever else it wrote (data, headers, its own keepalive) forgives
 * every strike, because clients that receive data ping to measure the
 * bandwidth (BDP probing in gRPC core and grpc-go). The third bad ping in a
 * row closes the connection with GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
 *
 * What the server wrote is read from the socket's byte count: the pings
 * received so far bound how many acknowledgements can be among those bytes,
 * so the count of other bytes is known from below and only grows when the
 * server really wrote something else. `now` is a clock in milliseconds.
 */
export function policePings(session: Http2Session, minIntervalMs: number, now: () => number, onClosed: () => void): void {
  if (minIntervalMs <= 0) return;
  let pings = 0;
  let strikes = 0;
  let lastPingAt = Number.NEGATIVE_INFINITY;
  let otherBytesWritten = Number.NEGATIVE_INFINITY;
  session.on('ping', () => {
    const at = now();
    pings += 1;
    const otherBytes = (session.socket?.bytesWritten ?? 0) - PING_ACK_BYTES * (pings - 1);
    if (otherBytes > otherBytesWritten) {
      otherBytesWritten = otherBytes;
      strikes = 0;
    } else if (at - lastPingAt < minIntervalMs) {
      strikes += 1;
    }
    lastPingAt = at;
    if (strikes <= MAX_PING_STRIKES || session.destroyed) return;
    session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, TOO_MANY_PINGS);
    session.destroy();
    onClosed();
  });
}
