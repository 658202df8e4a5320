import type { Job } from './job';
import type { Logger } from './logger';

/** What a handler gets besides its args; `Args` is the type of its args, as the handler declared it. */
export interface JobContext<Args extends readonly unknown[] = unknown[]> {
  /** The delivered job envelope (attempt, meta, lastCheckpoint...), its enums as names. */
  readonly job: Job;
  /** The job's positional arguments (the handler's first parameter). */
  readonly args: Args;
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
  /**
   * For a workflow job, the results of the steps it runs after
   * (ojs-workflows 7): a chain step gets every earlier step's keyed "0",
   * "1"...; a batch callback every batch job's; a nested workflow's result
   * is an object keyed by its elements' indexes. `{}` for a workflow job
   * that runs after nothing; undefined for a job outside a workflow.
   */
  readonly parentResults: Record<string, unknown> | undefined;
  /** The workflow the job is a step of; undefined outside a workflow. */
  readonly workflowId: string | undefined;
  /** The job's place in its workflow ("0", "1.2", "on_failure"); undefined outside a workflow. */
  readonly workflowStep: string | undefined;
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

/**
 * Handles one job type: resolves with the job's result, or throws to fail it.
 * `Args` is the tuple (or array) type of the job's args and `Result` what the
 * handler returns, which becomes the job's result (JSON: what `Producer.result()`
 * resolves with). Both are checked where the handler is written; the args
 * themselves are whatever the producer sent, not checked at run time.
 */
export type JobHandler<Args extends readonly unknown[] = unknown[], Result = unknown> = (
  args: Args,
  ctx: JobContext<Args>,
) => Result | Promise<Result>;
