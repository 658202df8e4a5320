import type { JobEvent } from '../domain/job-event';
import type { JobTransition, WorkerTransition } from '../domain/transition';

/** Structured logger (pino's calling convention: context object, then message). */
export interface Logger {
  debug(context: object, message: string): void;
  info(context: object, message: string): void;
  warn(context: object, message: string): void;
  error(context: object, message: string): void;
}

/** How long ago active jobs of a queue last showed signs of life. */
export interface HeartbeatAge {
  queue: string;
  /** The oldest among the queue's active jobs. */
  ageMs: number;
}

/**
 * Where the server's observations go: the OpenTelemetry implementation makes
 * a span per transition and per event, and keeps the metrics of timeouts.md
 * section 11.2.
 */
export interface Telemetry {
  jobTransitions(transitions: readonly JobTransition[]): void;
  workerTransition(transition: WorkerTransition): void;
  /** A timeout event (timeouts.md 11.1), recorded by the replica that caused it. */
  jobEvent(event: JobEvent): void;
  /** Where the heartbeat-age gauge reads from when metrics are collected. */
  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void;
}

/** Sources of identity and chance, injected so tests can pin them. */
export interface Entropy {
  /** A new UUIDv7 job id. */
  newJobId(): string;
  /** A unique, unguessable nonce for one claim's lease tokens. */
  newLeaseNonce(): string;
  /** Uniform in [0, 1), for retry jitter. */
  random(): number;
}
