import type { Cluster, Redis } from 'ioredis';
import type { HeartbeatNotice } from '../../domain/event-facts';
import { decodeHeartbeats } from './signal-codec';

/**
 * The heartbeat notices every replica's scripts publish (record-beat,
 * extend-lease), for this replica's listeners. Subscribed, on a connection
 * of its own opened at the first listener, only while someone listens:
 * notices are live-only, and nobody pays for them otherwise.
 */
export class HeartbeatFeed {
  private readonly listeners = new Set<(notice: HeartbeatNotice) => void>();
  private connection: Redis | Cluster | undefined;
  /** The subscription of the current listeners (ioredis renews it on reconnection). */
  private subscribed: Promise<unknown> | undefined;

  constructor(
    private readonly open: () => Redis | Cluster,
    private readonly channel: string,
  ) {}

  /**
   * Adds a listener; resolves once the channel is subscribed (at once when
   * it already is), so that every notice published from then on reaches it.
   * Fails, adding nothing, when the subscription is not made within
   * `timeoutMs` (Redis is unreachable: the subscription waits for it).
   */
  async follow(listener: (notice: HeartbeatNotice) => void, timeoutMs: number): Promise<() => void> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.subscribed = this.connect().subscribe(this.channel);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the heartbeat channel was not subscribed within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.subscribed, timedOut]);
    } catch (error) {
      this.unfollow(listener);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return () => this.unfollow(listener);
  }

  private unfollow(listener: (notice: HeartbeatNotice) => void): void {
    if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
    this.subscribed = undefined;
    this.connection?.unsubscribe(this.channel).catch(() => {}); // A lost connection unsubscribed already.
  }

  close(): void {
    this.listeners.clear();
    this.connection?.disconnect();
  }

  private connect(): Redis | Cluster {
    if (this.connection !== undefined) return this.connection;
    const connection = this.open();
    // Connection errors mean missed notices, which live-only heartbeats allow; the event must have a listener.
    connection.on('error', () => {});
    connection.on('message', (_channel: string, message: string) => {
      for (const notice of decodeHeartbeats(message)) for (const listener of this.listeners) listener(notice);
    });
    this.connection = connection;
    return connection;
  }
}
