import type { Cluster, Redis } from 'ioredis';
import type { HeartbeatNotice } from '../../domain/event-facts';
import { decodeHeartbeat } from './signal-codec';

/**
 * The heartbeat notices every replica's scripts publish (record-beat,
 * extend-lease), for this replica's listeners. Subscribed, on a connection
 * of its own opened at the first listener, only while someone listens:
 * notices are live-only, and nobody pays for them otherwise.
 */
export class HeartbeatFeed {
  private readonly listeners = new Set<(notice: HeartbeatNotice) => void>();
  private connection: Redis | Cluster | undefined;

  constructor(
    private readonly open: () => Redis | Cluster,
    private readonly channel: string,
  ) {}

  follow(listener: (notice: HeartbeatNotice) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1)
      this.connect()
        .subscribe(this.channel)
        .catch(() => {}); // Resubscribed on reconnection.
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.connection?.unsubscribe(this.channel).catch(() => {});
    };
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
      const notice = decodeHeartbeat(message);
      if (notice !== undefined) for (const listener of this.listeners) listener(notice);
    });
    this.connection = connection;
    return connection;
  }
}
