import { parseArgs } from 'node:util';
import type { ProtocolSettings } from '../app/app-context';
import type { MaintenanceIntervals } from '../background/maintenance';
import { payloadLimitsProblem, type PayloadLimits } from '../domain/limits';
import type { PrincipalLimits } from '../domain/principal-limits';
import type { EventRetention, RetentionPolicy } from '../domain/retention';
import { parseByteSize } from '../../lib/byte-size';
import type { ConnectionPolicy } from '../../lib/connection-policy';
import { parseDuration } from '../../lib/duration';
import { redisPrefixProblem } from '../../lib/redis-prefix';

export type BackendConfig =
  | { kind: 'memory'; maxJobs: number; maxBytes: number }
  | {
      kind: 'redis';
      url: string;
      prefix: string;
      /** Time between probes of whether Redis answers. */
      pingIntervalMs: number;
      /** How long Redis has to answer a probe before the store is unavailable (health NOT_SERVING). */
      pingTimeoutMs: number;
      /** How long a command waits for Redis before it fails as UNAVAILABLE. */
      commandTimeoutMs: number;
      /** How long a starting server waits for Redis before it gives up (exit 1). */
      connectTimeoutMs: number;
    };

/** Everything the server is configured with; built once at start-up, then frozen. */
export interface Config {
  host: string;
  port: number;
  /** The plaintext health-only port, for probes that cannot speak TLS; undefined for none. */
  healthPort?: number;
  /** The web dashboard's HTTP port, on `host`; undefined for no dashboard. */
  dashboardPort?: number;
  backend: BackendConfig;
  protocol: ProtocolSettings;
  limits: PayloadLimits;
  retention: RetentionPolicy;
  /** How many events, and for how long, the store keeps for watchers to resume from. */
  events: EventRetention;
  maintenance: MaintenanceIntervals;
  /** How long a stopping server lets in-flight calls finish. */
  shutdownTimeoutMs: number;
  /** Maximum connection age, how often clients may ping, how many calls a connection carries. */
  connections: ConnectionPolicy;
  /** What one principal of the auth file may hold and how fast it may enqueue (the file may override them per principal). */
  principalLimits: PrincipalLimits;
  logLevel: string;
  security: SecuritySettings;
}

/** TLS and authentication (see README "Security"); both off by default. */
export interface SecuritySettings {
  /** The server's certificate and key, and the CA that makes client certificates required (mTLS). */
  tls?: { certFile: string; keyFile: string; clientCaFile?: string };
  /** The principals and their credentials; without it every caller may do everything. */
  authFile?: string;
  /** Whether health checks on the main port need a principal (the health-only port never does). */
  healthAccess: (typeof HEALTH_ACCESS)[number];
  /** Whether reflection needs a principal, or is not served at all. */
  reflectionAccess: (typeof REFLECTION_ACCESS)[number];
  /** How often the TLS and auth files are read again to pick up a rotation. */
  reloadIntervalMs: number;
}

/** One setting: its environment variable, its flag, its default and how to read it. */
interface Setting {
  env: string;
  flag: string;
  defaultValue: string;
  description: string;
}

export const SETTINGS = {
  host: { env: 'OJS_HOST', flag: 'host', defaultValue: '0.0.0.0', description: 'address to listen on' },
  port: { env: 'OJS_PORT', flag: 'port', defaultValue: '9090', description: 'port to listen on (0 picks a free one)' },
  healthPort: {
    env: 'OJS_HEALTH_PORT',
    flag: 'health-port',
    defaultValue: '',
    description:
      'plaintext port serving grpc.health.v1.Health only, on --host, for probes that cannot speak TLS (empty: none; 0 picks a free one)',
  },
  dashboardPort: {
    env: 'OJS_DASHBOARD_PORT',
    flag: 'dashboard-port',
    defaultValue: '',
    description:
      'HTTP port of the web dashboard, on --host; it asks for the tokens of --auth-file (empty: no dashboard; 0 picks a free one)',
  },
  backend: { env: 'OJS_BACKEND', flag: 'backend', defaultValue: 'memory', description: 'job store: memory or redis' },
  redisUrl: {
    env: 'REDIS_URL',
    flag: 'redis-url',
    defaultValue: 'redis://127.0.0.1:6379',
    description: 'Redis to use with --backend redis; redis+cluster://host:port,host:port for a cluster',
  },
  redisPrefix: {
    env: 'OJS_REDIS_PREFIX',
    flag: 'redis-prefix',
    defaultValue: '{ojs}',
    description: 'key prefix; its {hash tag} puts every key of a deployment in one cluster slot (no control characters)',
  },
  redisPingInterval: {
    env: 'OJS_REDIS_PING_INTERVAL',
    flag: 'redis-ping-interval',
    defaultValue: '1s',
    description: 'how often the server asks Redis whether it answers',
  },
  redisPingTimeout: {
    env: 'OJS_REDIS_PING_TIMEOUT',
    flag: 'redis-ping-timeout',
    defaultValue: '1s',
    description: 'how long Redis has to answer before health says NOT_SERVING (until it answers again)',
  },
  redisCommandTimeout: {
    env: 'OJS_REDIS_COMMAND_TIMEOUT',
    flag: 'redis-command-timeout',
    defaultValue: '5s',
    description: 'how long a call waits for Redis before it fails with UNAVAILABLE',
  },
  redisConnectTimeout: {
    env: 'OJS_REDIS_CONNECT_TIMEOUT',
    flag: 'redis-connect-timeout',
    defaultValue: '30s',
    description: 'how long a starting server waits for Redis (retrying) before it exits with an error',
  },
  memoryMaxJobs: {
    env: 'OJS_MEMORY_MAX_JOBS',
    flag: 'memory-max-jobs',
    defaultValue: '1000000',
    description: 'most jobs the memory store holds; enqueues beyond are refused (RESOURCE_EXHAUSTED) until retention makes room',
  },
  memoryMaxBytes: {
    env: 'OJS_MEMORY_MAX_BYTES',
    flag: 'memory-max-bytes',
    defaultValue: '512MiB',
    description: 'most bytes of jobs (roughly their JSON size) the memory store holds, such as 64KiB, 512MiB or 1GiB',
  },
  maxJobBytes: {
    env: 'OJS_MAX_JOB_BYTES',
    flag: 'max-job-bytes',
    defaultValue: '1MiB',
    description: 'most bytes of args and meta of one job (RESOURCE_EXHAUSTED payload_too_large beyond)',
  },
  maxResultBytes: {
    env: 'OJS_MAX_RESULT_BYTES',
    flag: 'max-result-bytes',
    defaultValue: '1MiB',
    description: 'most bytes of a job result (an Ack beyond is refused with result_too_large; the job stays active)',
  },
  heartbeatInterval: {
    env: 'OJS_HEARTBEAT_INTERVAL',
    flag: 'heartbeat-interval',
    defaultValue: '5s',
    description: 'beat interval announced to workers',
  },
  heartbeatTimeout: {
    env: 'OJS_HEARTBEAT_TIMEOUT',
    flag: 'heartbeat-timeout',
    defaultValue: '30s',
    description: 'silence after which a worker is dead (at least 3 intervals)',
  },
  visibilityTimeout: {
    env: 'OJS_VISIBILITY_TIMEOUT',
    flag: 'visibility-timeout',
    defaultValue: '1800s',
    description: 'default reservation period of a fetched job',
  },
  jobTimeout: { env: 'OJS_JOB_TIMEOUT', flag: 'job-timeout', defaultValue: '1800s', description: 'default execution timeout of a job' },
  jobGracePeriod: {
    env: 'OJS_JOB_GRACE_PERIOD',
    flag: 'job-grace-period',
    defaultValue: '30s',
    description: "default time from a job's soft timeout to its reclaim (0s: none)",
  },
  jobHeartbeatTimeout: {
    env: 'OJS_JOB_HEARTBEAT_TIMEOUT',
    flag: 'job-heartbeat-timeout',
    defaultValue: '60s',
    description: 'default silence about an active job after which it is stalled',
  },
  maxConnectionAge: {
    env: 'OJS_MAX_CONNECTION_AGE',
    flag: 'max-connection-age',
    defaultValue: '0s',
    description: 'age at which a connection is told to go away (GOAWAY) so clients reconnect and spread over replicas (0s: never)',
  },
  maxConnectionAgeGrace: {
    env: 'OJS_MAX_CONNECTION_AGE_GRACE',
    flag: 'max-connection-age-grace',
    defaultValue: '30s',
    description: 'time the streams of an aged connection get before it is closed under them (they reconnect)',
  },
  minPingInterval: {
    env: 'OJS_MIN_PING_INTERVAL',
    flag: 'min-ping-interval',
    defaultValue: '5s',
    description:
      'closest pings a client may send with nothing from the server between; the third closer one closes the connection (0s: any)',
  },
  maxStreamsPerConnection: {
    env: 'OJS_MAX_STREAMS_PER_CONNECTION',
    flag: 'max-streams-per-connection',
    defaultValue: '1000',
    description: 'calls one connection may carry at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; clients queue the rest; 0: no limit)',
  },
  maxStreamsPerPrincipal: {
    env: 'OJS_MAX_STREAMS_PER_PRINCIPAL',
    flag: 'max-streams-per-principal',
    defaultValue: '10000',
    description: 'Fetch, Beat, WatchEvents and WaitForJob calls one principal may hold open at once (0: no limit)',
  },
  maxConnectionsPerPrincipal: {
    env: 'OJS_MAX_CONNECTIONS_PER_PRINCIPAL',
    flag: 'max-connections-per-principal',
    defaultValue: '1000',
    description: 'open connections one principal may make calls on (0: no limit)',
  },
  enqueueRate: {
    env: 'OJS_ENQUEUE_RATE',
    flag: 'enqueue-rate',
    defaultValue: '0',
    description: 'jobs a second one principal may enqueue on average (RESOURCE_EXHAUSTED rate_limited with RetryInfo beyond; 0: no limit)',
  },
  enqueueBurst: {
    env: 'OJS_ENQUEUE_BURST',
    flag: 'enqueue-burst',
    defaultValue: '0',
    description: 'jobs one principal may enqueue at once above --enqueue-rate (0: one second of the rate)',
  },
  streamKeepalive: {
    env: 'OJS_STREAM_KEEPALIVE',
    flag: 'stream-keepalive',
    defaultValue: '15s',
    description: 'keepalive interval of Fetch and Beat streams',
  },
  promoteInterval: {
    env: 'OJS_PROMOTE_INTERVAL',
    flag: 'promote-interval',
    defaultValue: '1s',
    description:
      'longest the promotion pass sleeps: jobs are promoted when due, and this bounds the delay when their announcement was lost',
  },
  reapInterval: {
    env: 'OJS_REAP_INTERVAL',
    flag: 'reap-interval',
    defaultValue: '1s',
    description: 'how often timeouts, expired leases, waiting deadlines and dead workers are looked for',
  },
  retentionCompleted: {
    env: 'OJS_RETENTION_COMPLETED',
    flag: 'retention-completed',
    defaultValue: '1h',
    description: 'how long completed jobs stay queryable',
  },
  retentionCancelled: {
    env: 'OJS_RETENTION_CANCELLED',
    flag: 'retention-cancelled',
    defaultValue: '24h',
    description: 'how long cancelled jobs stay queryable',
  },
  retentionDiscarded: {
    env: 'OJS_RETENTION_DISCARDED',
    flag: 'retention-discarded',
    defaultValue: '7d',
    description: 'how long discarded (dead-letter) jobs stay, for inspection and RetryJob',
  },
  eventRetentionCount: {
    env: 'OJS_EVENT_RETENTION_COUNT',
    flag: 'event-retention-count',
    defaultValue: '100000',
    description: 'most events kept for WatchEvents to resume from (0: no event log; live watchers see nothing)',
  },
  eventRetentionAge: {
    env: 'OJS_EVENT_RETENTION_AGE',
    flag: 'event-retention-age',
    defaultValue: '24h',
    description: 'how long events are kept',
  },
  retentionMaxJobs: {
    env: 'OJS_RETENTION_MAX_JOBS',
    flag: 'retention-max-jobs',
    defaultValue: '100000',
    description: 'most finished jobs kept, oldest removed first (0: no limit)',
  },
  shutdownTimeout: {
    env: 'OJS_SHUTDOWN_TIMEOUT',
    flag: 'shutdown-timeout',
    defaultValue: '30s',
    description: 'time in-flight calls get to finish on shutdown',
  },
  logLevel: { env: 'OJS_LOG_LEVEL', flag: 'log-level', defaultValue: 'info', description: 'trace, debug, info, warn, error or silent' },
  tlsCert: {
    env: 'OJS_TLS_CERT',
    flag: 'tls-cert',
    defaultValue: '',
    description: 'PEM certificate (chain) of the server; serves TLS with --tls-key',
  },
  tlsKey: { env: 'OJS_TLS_KEY', flag: 'tls-key', defaultValue: '', description: 'PEM private key of --tls-cert' },
  tlsClientCa: {
    env: 'OJS_TLS_CLIENT_CA',
    flag: 'tls-client-ca',
    defaultValue: '',
    description: 'PEM CA bundle; when set, clients must present a certificate it signed (mTLS)',
  },
  authFile: {
    env: 'OJS_AUTH_FILE',
    flag: 'auth-file',
    defaultValue: '',
    description:
      'JSON file of principals (token hashes, certificate identities, roles, queues); when set, every call but health and reflection needs one',
  },
  healthAuth: {
    env: 'OJS_HEALTH_AUTH',
    flag: 'health-auth',
    defaultValue: 'open',
    description: 'open, or authenticated: health checks on the main port need a principal of --auth-file (the health port stays open)',
  },
  reflection: {
    env: 'OJS_REFLECTION',
    flag: 'reflection',
    defaultValue: 'open',
    description: 'open, authenticated (needs a principal of --auth-file) or off (not served)',
  },
  reloadInterval: {
    env: 'OJS_RELOAD_INTERVAL',
    flag: 'reload-interval',
    defaultValue: '10s',
    description: 'how often the TLS and auth files are read again; a changed file that is not usable is logged and ignored',
  },
} as const satisfies Record<string, Setting>;

type SettingName = keyof typeof SETTINGS;

const HEALTH_ACCESS = ['open', 'authenticated'] as const;
const REFLECTION_ACCESS = ['open', 'authenticated', 'off'] as const;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Usage text listing every setting, for --help and the README. */
export function usage(): string {
  const rows = Object.values(SETTINGS).map(
    (s) => `  --${s.flag.padEnd(21)} ${s.env.padEnd(25)} ${s.defaultValue.padEnd(23)} ${s.description}`,
  );
  return [
    'Usage: node dist/src/main.js [flags]',
    '',
    '  flag                    environment variable      default                 meaning',
    ...rows,
  ].join('\n');
}

/**
 * Reads flags (which win) and environment variables, applies defaults and
 * validates. Throws a ConfigError listing every problem at once.
 */
export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): Readonly<Config> {
  const options = Object.fromEntries(Object.values(SETTINGS).map((s) => [s.flag, { type: 'string' as const }]));
  const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  const problems: string[] = [];
  const raw = (name: SettingName): string => {
    const setting: Setting = SETTINGS[name];
    return values[setting.flag] ?? env[setting.env] ?? setting.defaultValue;
  };
  const describe = (name: SettingName): string => `${SETTINGS[name].env} (--${SETTINGS[name].flag})`;
  const duration = (name: SettingName, { zeroAllowed = false }: { zeroAllowed?: boolean } = {}): number => {
    const ms = parseDuration(raw(name));
    if (ms === undefined || ms < 0 || (ms === 0 && !zeroAllowed)) {
      problems.push(`${describe(name)} must be a positive duration such as "5s" or "250ms", got "${raw(name)}"`);
      return 1;
    }
    return ms;
  };
  const oneOf = <Value extends string>(name: SettingName, allowed: readonly Value[]): Value => {
    const value = allowed.find((candidate) => candidate === raw(name));
    if (value === undefined) problems.push(`${describe(name)} must be one of ${allowed.join(', ')}, got "${raw(name)}"`);
    return value ?? allowed[0]!;
  };
  const wholeNumber = (name: SettingName): number => {
    const value = Number(raw(name));
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push(`${describe(name)} must be a whole number, got "${raw(name)}"`);
      return 0;
    }
    return value;
  };
  const byteSize = (name: SettingName): number => {
    const bytes = parseByteSize(raw(name));
    if (bytes === undefined || bytes <= 0) {
      problems.push(`${describe(name)} must be a positive size such as "64KiB", "512MiB", "1GiB" or a number of bytes, got "${raw(name)}"`);
      return 1;
    }
    return bytes;
  };

  const port = Number(raw('port'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`${describe('port')} must be 0-65535, got "${raw('port')}"`);
  const protocol: ProtocolSettings = {
    heartbeatIntervalMs: duration('heartbeatInterval'),
    heartbeatTimeoutMs: duration('heartbeatTimeout'),
    visibilityTimeoutMs: duration('visibilityTimeout'),
    jobTimeoutMs: duration('jobTimeout'),
    jobGracePeriodMs: duration('jobGracePeriod', { zeroAllowed: true }),
    jobHeartbeatTimeoutMs: duration('jobHeartbeatTimeout'),
    streamKeepaliveMs: duration('streamKeepalive'),
  };
  // worker-protocol 10.3: a shorter timeout declares busy but healthy workers dead.
  if (protocol.heartbeatTimeoutMs < 3 * protocol.heartbeatIntervalMs) {
    problems.push(
      `${describe('heartbeatTimeout')} (${raw('heartbeatTimeout')}) must be at least three heartbeat intervals (3 x ${raw('heartbeatInterval')})`,
    );
  }
  const backendKind = raw('backend');
  if (backendKind !== 'memory' && backendKind !== 'redis')
    problems.push(`${describe('backend')} must be memory or redis, got "${backendKind}"`);
  const prefix = raw('redisPrefix');
  const prefixProblem = redisPrefixProblem(prefix);
  if (prefixProblem !== undefined) problems.push(`${describe('redisPrefix')} ${prefixProblem}, got ${JSON.stringify(prefix)}`);
  const memoryMaxJobs = Number(raw('memoryMaxJobs'));
  if (!Number.isSafeInteger(memoryMaxJobs) || memoryMaxJobs <= 0)
    problems.push(`${describe('memoryMaxJobs')} must be a positive whole number, got "${raw('memoryMaxJobs')}"`);
  const memoryMaxBytes = byteSize('memoryMaxBytes');
  const redisTimeouts = {
    pingIntervalMs: duration('redisPingInterval'),
    pingTimeoutMs: duration('redisPingTimeout'),
    commandTimeoutMs: duration('redisCommandTimeout'),
    connectTimeoutMs: duration('redisConnectTimeout'),
  };
  const backend: BackendConfig =
    backendKind === 'redis'
      ? { kind: 'redis', url: raw('redisUrl'), prefix, ...redisTimeouts }
      : { kind: 'memory', maxJobs: memoryMaxJobs, maxBytes: memoryMaxBytes };
  const maxJobs = Number(raw('retentionMaxJobs'));
  if (!Number.isInteger(maxJobs) || maxJobs < 0)
    problems.push(`${describe('retentionMaxJobs')} must be a whole number, got "${raw('retentionMaxJobs')}"`);
  const eventCount = Number(raw('eventRetentionCount'));
  if (!Number.isSafeInteger(eventCount) || eventCount < 0)
    problems.push(`${describe('eventRetentionCount')} must be a whole number, got "${raw('eventRetentionCount')}"`);
  const events: EventRetention = { maxCount: eventCount, maxAgeMs: duration('eventRetentionAge') };
  const retention: RetentionPolicy = {
    completedMs: duration('retentionCompleted'),
    cancelledMs: duration('retentionCancelled'),
    discardedMs: duration('retentionDiscarded'),
    maxJobs,
  };
  const limits: PayloadLimits = { maxJobBytes: byteSize('maxJobBytes'), maxResultBytes: byteSize('maxResultBytes') };
  const limitsProblem = payloadLimitsProblem(limits);
  if (limitsProblem !== undefined) problems.push(`${describe('maxJobBytes')} and ${describe('maxResultBytes')}: ${limitsProblem}`);
  const logLevel = raw('logLevel');
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`${describe('logLevel')} must be one of ${LOG_LEVELS.join(', ')}`);
  const [certFile, keyFile, clientCaFile, authFile] = [raw('tlsCert'), raw('tlsKey'), raw('tlsClientCa'), raw('authFile')];
  if ((certFile === '') !== (keyFile === '')) problems.push(`${describe('tlsCert')} and ${describe('tlsKey')} must be set together`);
  if (clientCaFile !== '' && certFile === '')
    problems.push(`${describe('tlsClientCa')} needs ${describe('tlsCert')} and ${describe('tlsKey')}`);
  const healthAccess = oneOf('healthAuth', HEALTH_ACCESS);
  const reflectionAccess = oneOf('reflection', REFLECTION_ACCESS);
  for (const [name, access] of [
    ['healthAuth', healthAccess],
    ['reflection', reflectionAccess],
  ] as const) {
    if (access === 'authenticated' && authFile === '') problems.push(`${describe(name)} authenticated needs ${describe('authFile')}`);
  }
  const healthPort = raw('healthPort') === '' ? undefined : Number(raw('healthPort'));
  if (healthPort !== undefined && (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65535))
    problems.push(`${describe('healthPort')} must be 0-65535 or empty, got "${raw('healthPort')}"`);
  else if (healthPort !== undefined && healthPort !== 0 && healthPort === port)
    problems.push(`${describe('healthPort')} must differ from ${describe('port')}`);
  const dashboardPort = raw('dashboardPort') === '' ? undefined : Number(raw('dashboardPort'));
  if (dashboardPort !== undefined && (!Number.isInteger(dashboardPort) || dashboardPort < 0 || dashboardPort > 65535))
    problems.push(`${describe('dashboardPort')} must be 0-65535 or empty, got "${raw('dashboardPort')}"`);
  else if (dashboardPort !== undefined && dashboardPort !== 0 && (dashboardPort === port || dashboardPort === healthPort))
    problems.push(`${describe('dashboardPort')} must differ from ${describe('port')} and ${describe('healthPort')}`);
  const security: SecuritySettings = {
    ...(certFile === '' ? {} : { tls: { certFile, keyFile, ...(clientCaFile === '' ? {} : { clientCaFile }) } }),
    ...(authFile === '' ? {} : { authFile }),
    healthAccess,
    reflectionAccess,
    reloadIntervalMs: duration('reloadInterval'),
  };
  const enqueueRate = Number(raw('enqueueRate'));
  if (!Number.isFinite(enqueueRate) || enqueueRate < 0 || raw('enqueueRate').trim() === '')
    problems.push(`${describe('enqueueRate')} must be a number of jobs a second (0: no limit), got "${raw('enqueueRate')}"`);
  const config: Config = {
    host: raw('host'),
    port,
    ...(healthPort === undefined ? {} : { healthPort }),
    ...(dashboardPort === undefined ? {} : { dashboardPort }),
    backend,
    protocol,
    limits,
    retention,
    events,
    maintenance: { promoteIntervalMs: duration('promoteInterval'), reapIntervalMs: duration('reapInterval') },
    shutdownTimeoutMs: duration('shutdownTimeout'),
    connections: {
      maxAgeMs: duration('maxConnectionAge', { zeroAllowed: true }),
      maxAgeGraceMs: duration('maxConnectionAgeGrace', { zeroAllowed: true }),
      minPingIntervalMs: duration('minPingInterval', { zeroAllowed: true }),
      maxStreams: wholeNumber('maxStreamsPerConnection'),
    },
    principalLimits: {
      maxStreams: wholeNumber('maxStreamsPerPrincipal'),
      maxConnections: wholeNumber('maxConnectionsPerPrincipal'),
      enqueueRatePerSecond: enqueueRate,
      enqueueBurst: wholeNumber('enqueueBurst'),
    },
    logLevel,
    security,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
