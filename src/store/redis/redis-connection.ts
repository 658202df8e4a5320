import { Cluster, Redis, type RedisOptions } from 'ioredis';

export interface RedisConnection {
  /** For commands and scripts. */
  command: Redis | Cluster;
  /** For SUBSCRIBE (a connection in subscriber mode can do nothing else). */
  subscriber: Redis | Cluster;
  /**
   * For the probe of whether Redis answers, alone, with the options of the
   * command connection: on a busy command connection its question would wait
   * behind the replica's own scripts, and the replica's backlog would look
   * like a Redis that does not answer.
   */
  probe: Redis | Cluster;
  /**
   * Opens another connection like the subscriber (it waits through
   * reconnections, and no command times out): for what must not share one,
   * such as a blocking XREAD or another subscription. Connects lazily.
   */
  readonly open: () => Redis | Cluster;
}

const CLUSTER_SCHEME = 'redis+cluster://';

/** Reconnect with backoff and jitter, forever: Redis coming back must heal the server by itself. */
function reconnectDelay(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2);
}

/**
 * Options for the command connection. While Redis is unreachable a call
 * fails at once (no offline queue) so that RPCs answer UNAVAILABLE instead
 * of hanging, and a script that was in flight when the connection dropped
 * is never sent again: scripts are not idempotent (a resent enqueue would
 * report its own jobs as duplicates). A call Redis does not answer within
 * `commandTimeoutMs` (a stuck or overloaded server) fails as UNAVAILABLE.
 */
function commandOptions(commandTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    retryStrategy: reconnectDelay,
    lazyConnect: true,
  };
}

/**
 * Subscriptions queue until connected and are restored after every
 * reconnect; commands (a blocking read) wait for the connection too.
 */
const SUBSCRIBER_OPTIONS: RedisOptions = {
  enableOfflineQueue: true,
  autoResubscribe: true,
  retryStrategy: reconnectDelay,
  lazyConnect: true,
};

/**
 * Opens the connections for a URL: redis://[user:password@]host:port[/db],
 * rediss://... for TLS, or redis+cluster://[user:password@]host:port,host:port
 * for Redis Cluster (any reachable nodes; the rest is discovered).
 */
export function openRedis(url: string, commandTimeoutMs: number): RedisConnection {
  if (!url.startsWith(CLUSTER_SCHEME)) {
    const open = (): Redis => new Redis(url, SUBSCRIBER_OPTIONS);
    const command = (): Redis => new Redis(url, commandOptions(commandTimeoutMs));
    return { command: command(), subscriber: open(), probe: command(), open };
  }
  const rest = url.slice(CLUSTER_SCHEME.length);
  const at = rest.lastIndexOf('@');
  const [username, password] = at >= 0 ? rest.slice(0, at).split(':').map(decodeURIComponent) : [];
  const nodes = (at >= 0 ? rest.slice(at + 1) : rest).split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host: host!, port: Number(port ?? 6379) };
  });
  const auth: RedisOptions = {};
  if (username) auth.username = username;
  if (password) auth.password = password;
  // The cluster client needs its own queue while it discovers the slots (without it, connecting
  // sometimes never completes); the node connections beneath it still fail fast.
  const cluster = (options: RedisOptions): Cluster =>
    new Cluster(nodes, {
      enableOfflineQueue: true,
      lazyConnect: true,
      clusterRetryStrategy: reconnectDelay,
      redisOptions: { ...options, ...auth, lazyConnect: false },
    });
  const open = (): Cluster => cluster(SUBSCRIBER_OPTIONS);
  const command = (): Cluster => cluster(commandOptions(commandTimeoutMs));
  return { command: command(), subscriber: open(), probe: command(), open };
}
