import type { ServerHttp2Session } from 'node:http2';
import { TokenBucket } from '../../../lib/token-bucket';
import type { Clock } from '../../domain/clock';
import { rateLimited } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import type { PrincipalLimits } from '../../domain/principal-limits';

/** What one principal holds now. */
interface Usage {
  streams: number;
  /** Keys (connectionKey) of the open connections that carried one of its calls. */
  connections: Set<string>;
  enqueue?: { bucket: TokenBucket; ratePerSecond: number; burst: number };
}

/**
 * A connection as grpc-js names a call's peer (`call.getPeer()`, nice-grpc's
 * `context.peer`): the remote address and port of its socket. One server
 * socket per remote address and port, so the key names one connection.
 */
export function connectionKey(remoteAddress: string | undefined, remotePort: number | undefined): string | undefined {
  return remoteAddress === undefined || remotePort === undefined ? undefined : `${remoteAddress}:${remotePort}`;
}

/**
 * What every principal holds of the server (streams, connections) and how
 * fast it enqueues, checked against its limits (the server's, overridden by
 * the principal's own from the auth file). Principals are told apart by
 * name, which outlives a reload of the auth file.
 *
 * A principal is known per call, not per connection (a proxy's connection
 * may carry several), so a connection counts for every principal that made
 * a call on it, from that call until the connection closes. Connections are
 * learnt from the HTTP/2 sessions the server accepts (`watch`); a call whose
 * connection is not among them (already closed) is not counted, so nothing
 * is counted that no close will release.
 */
export class PrincipalUsage {
  private readonly openConnections = new Set<string>();
  private readonly usage = new Map<string, Usage>();

  constructor(
    private readonly defaults: PrincipalLimits,
    private readonly clock: Clock,
  ) {}

  /** Follows a session the server accepted, to forget it in every principal's count when it closes. */
  watch(session: ServerHttp2Session): void {
    const key = connectionKey(session.socket?.remoteAddress, session.socket?.remotePort);
    if (key === undefined) return;
    this.openConnections.add(key);
    session.once('close', () => {
      this.openConnections.delete(key);
      for (const usage of this.usage.values()) usage.connections.delete(key);
    });
  }

  /** Counts the connection `peer` for `principal`; refuses (rate_limited) a new one past its limit. */
  admitConnection(principal: Principal, peer: string): void {
    if (!this.openConnections.has(peer)) return;
    const usage = this.usageOf(principal);
    if (usage.connections.has(peer)) return;
    const max = this.limitsOf(principal).maxConnections;
    if (max > 0 && usage.connections.size >= max) throw rateLimited('connections', max);
    usage.connections.add(peer);
  }

  /** Takes a stream slot of `principal` (rate_limited past its limit); the returned function gives it back, once. */
  openStream(principal: Principal): () => void {
    const usage = this.usageOf(principal);
    const max = this.limitsOf(principal).maxStreams;
    if (max > 0 && usage.streams >= max) throw rateLimited('streams', max);
    usage.streams += 1;
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      usage.streams -= 1;
    };
  }

  /** Admits `jobs` enqueued jobs of `principal` at its rate, or refuses (rate_limited) saying when to retry. */
  admitEnqueue(principal: Principal, jobs: number): void {
    const { enqueueRatePerSecond: ratePerSecond, enqueueBurst } = this.limitsOf(principal);
    if (ratePerSecond <= 0) return;
    const burst = enqueueBurst > 0 ? enqueueBurst : Math.max(1, Math.ceil(ratePerSecond));
    const usage = this.usageOf(principal);
    const now = this.clock.now();
    // A bucket is rebuilt (full) when a reloaded auth file changed the principal's rate.
    if (usage.enqueue?.ratePerSecond !== ratePerSecond || usage.enqueue.burst !== burst) {
      usage.enqueue = { bucket: new TokenBucket(ratePerSecond, burst, now), ratePerSecond, burst };
    }
    const answer = usage.enqueue.bucket.take(jobs, now);
    if (!answer.isAdmitted) throw rateLimited('enqueue_rate', ratePerSecond, answer.retryAfterMs);
  }

  private limitsOf(principal: Principal): PrincipalLimits {
    return principal.limits === undefined ? this.defaults : { ...this.defaults, ...principal.limits };
  }

  private usageOf(principal: Principal): Usage {
    let usage = this.usage.get(principal.name);
    if (usage === undefined) {
      usage = { streams: 0, connections: new Set() };
      this.usage.set(principal.name, usage);
    }
    return usage;
  }
}
