import type { JobTransition, WorkerTransition } from '../domain/transition';

/** Structured logger (pino's calling convention: context object, then message). */
export interface Logger {
  debug(context: object, message: string): void;
  info(context: object, message: string): void;
  warn(context: object, message: string): void;
  error(context: object, message: string): void;
}

/** Records state transitions; the OpenTelemetry implementation makes one span per transition. */
export interface TransitionRecorder {
  jobTransitions(transitions: readonly JobTransition[]): void;
  workerTransition(transition: WorkerTransition): void;
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
