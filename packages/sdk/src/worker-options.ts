import { hostname } from 'node:os';
import { uuidv7 } from 'uuidv7';
import { resolveChannelSecurity, type ChannelSecurity, type SecurityOptions } from './channel-security';
import { durationSetting } from './duration';
import { defaultLogger, type Logger } from './logger';

export interface WorkerOptions extends SecurityOptions {
  /** host:port of the server. Default: OJS_SERVER, else 127.0.0.1:9090. */
  address?: string;
  /** Queues to consume, highest priority first. Default: OJS_QUEUES (comma-separated), else ["default"]. */
  queues?: string[];
  /** Jobs run at once. Default: OJS_CONCURRENCY, else 10. */
  concurrency?: number;
  /** Default: a UUIDv7, unique per process. */
  workerId?: string;
  labels?: string[];
  /**
   * How long a stopping worker lets running jobs finish before failing them
   * with error type `shutdown`. Default: OJS_SHUTDOWN_GRACE_PERIOD, else 25 s
   * (worker-protocol 7.3: inside Kubernetes' default 30 s).
   */
  shutdownGracePeriodMs?: number;
  /** Serve GET /ready and /live on this port (0 picks one). Default: OJS_READINESS_PORT, else none. */
  readinessPort?: number;
  readinessHost?: string;
  /**
   * How long acknowledgements wait to be sent together. Default 0: at once
   * when no call is under way, else together once it is answered.
   */
  settlementCoalesceMs?: number;
  logger?: Logger;
}

/** Every option with its default resolved; the security options become the channel's credentials and token. */
export type ResolvedWorkerOptions = Required<Omit<WorkerOptions, 'readinessPort' | keyof SecurityOptions>> & {
  readinessPort: number | undefined;
  security: ChannelSecurity;
};

/** A whole number from an environment variable, or undefined when it is unset or empty. */
function integer(value: string | undefined, setting: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${setting} must be a whole number, got "${value}"`);
  return n;
}

export function resolveWorkerOptions(options: WorkerOptions, env: NodeJS.ProcessEnv = process.env): ResolvedWorkerOptions {
  const concurrency = options.concurrency ?? integer(env['OJS_CONCURRENCY'], 'OJS_CONCURRENCY') ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency must be a positive whole number, got ${concurrency}`);
  const grace = env['OJS_SHUTDOWN_GRACE_PERIOD'];
  const address = options.address ?? env['OJS_SERVER'] ?? '127.0.0.1:9090';
  return {
    address,
    security: resolveChannelSecurity(address, options, env),
    queues: options.queues ??
      env['OJS_QUEUES']
        ?.split(',')
        .map((q) => q.trim())
        .filter(Boolean) ?? ['default'],
    concurrency,
    workerId: options.workerId ?? `${hostname()}-${uuidv7()}`,
    labels: options.labels ?? [],
    shutdownGracePeriodMs:
      options.shutdownGracePeriodMs ?? (grace === undefined ? 25_000 : durationSetting(grace, 'OJS_SHUTDOWN_GRACE_PERIOD')),
    readinessPort: options.readinessPort ?? integer(env['OJS_READINESS_PORT'], 'OJS_READINESS_PORT'),
    readinessHost: options.readinessHost ?? '0.0.0.0',
    settlementCoalesceMs: options.settlementCoalesceMs ?? 0,
    logger: options.logger ?? defaultLogger('ojs-worker'),
  };
}
