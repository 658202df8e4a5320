import type { Clock } from '../domain/clock';
import type { PayloadLimits } from '../domain/limits';
import type { RetentionPolicy } from '../domain/retention';
import type { JobStore } from '../store/job-store';
import type { Entropy, Logger, Telemetry } from './ports';

/** Protocol timings the server announces to workers and enforces. */
export interface ProtocolSettings {
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  /** Default reservation period of a fetched job. */
  visibilityTimeoutMs: number;
  /** Default execution timeout of a job. */
  jobTimeoutMs: number;
  /** Default time from a job's soft timeout to its reclaim (timeouts.md 5.4). */
  jobGracePeriodMs: number;
  /** Default silence about an active job after which it is stalled (timeouts.md 5.5). */
  jobHeartbeatTimeoutMs: number;
  /** Keepalive interval of the Fetch and Beat streams. */
  streamKeepaliveMs: number;
}

/** What every use case needs: the store and the injected world. */
export interface AppContext {
  store: JobStore;
  clock: Clock;
  settings: ProtocolSettings;
  /** The configurable size limits of jobs and results. */
  limits: PayloadLimits;
  /** This deployment's name in event sources (ojs://<service>/...). */
  service: string;
  retention: RetentionPolicy;
  entropy: Entropy;
  telemetry: Telemetry;
  logger: Logger;
}
