import type { Job } from '../gen/ojs/server/v1/job';
import type { Logger } from './logger';

/** What a handler gets besides its args. */
export interface JobContext {
  /** The delivered job envelope (attempt, meta, last_checkpoint...). */
  readonly job: Job;
  /** The job's positional arguments. */
  readonly args: unknown[];
  /** 1 for the first attempt. */
  readonly attempt: number;
  /**
   * Fires when the handler should stop: its execution timeout passed (the
   * grace period starts) or the server took the job back, the job was
   * cancelled, or the worker is shutting down for good. `signal.reason` is a
   * JobAborted saying which.
   */
  readonly signal: AbortSignal;
  /** The checkpoint an earlier attempt saved, to resume from. */
  readonly lastCheckpoint: unknown;
  readonly logger: Logger;
  /**
   * Proves the job is alive between beats (renews its reservation now). The
   * worker's beats already do this every few seconds; call it from handlers
   * that want to be explicit about long stretches of work.
   */
  heartbeat(): Promise<void>;
  /** Reports progress, 0..1, with optional detail; never throws (progress is best effort). */
  progress(value: number, data?: Record<string, unknown>): Promise<void>;
  /** Saves state the next attempt can resume from (as `lastCheckpoint`); never throws. */
  checkpoint(state: unknown): Promise<void>;
}

/** Handles one job type: resolves with the job's result, or throws to fail it. */
export type JobHandler = (args: unknown[], ctx: JobContext) => unknown;
