import type { Job } from '../gen/ojs/server/v1/job';
import type { Delivery, WorkerServiceClient } from '../gen/ojs/server/v1/worker_service';
import { JobAborted, sdkJobError, toJobError, type AbortKind } from './errors';
import type { JobContext, JobHandler } from './job-context';
import type { Logger } from './logger';
import { compose, type Middleware } from './middleware';
import type { Settlements } from './settlements';

/** Execution middleware: wraps every handler call, e.g. for tracing, metrics or error reporting. */
export type ExecutionMiddleware = Middleware<JobContext, unknown>;

/** One job this worker holds, from delivery until its settlement is sent. */
export class RunningJob {
  readonly abort = new AbortController();
  /** Set once the outcome is decided; a later one is ignored. */
  isSettled = false;
  readonly done: Promise<void>;
  private finish!: () => void;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    readonly job: Job,
    readonly leaseToken: string,
  ) {
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  get id(): string {
    return this.job.id;
  }

  stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  after(ms: number, action: () => void): void {
    const timer = setTimeout(action, ms);
    timer.unref();
    this.timers.push(timer);
  }

  markDone(): void {
    this.stopTimers();
    this.finish();
  }
}

export interface JobRunnerDeps {
  workerId: string;
  client: WorkerServiceClient;
  settlements: Settlements;
  logger: Logger;
  handlers: ReadonlyMap<string, JobHandler>;
  middleware: readonly ExecutionMiddleware[];
}

const SECOND = 1_000;

/**
 * Runs delivered jobs: builds each handler's context, enforces the job's
 * timeout on the worker side too (timeouts.md 7.2: abort at the timeout,
 * fail with `timeout` when the grace period ends), and settles the outcome
 * exactly once.
 */
export class JobRunner {
  readonly active = new Map<string, RunningJob>();

  constructor(private readonly deps: JobRunnerDeps) {}

  start(delivery: Delivery): RunningJob | undefined {
    const job = delivery.job;
    if (job === undefined || this.active.has(job.id)) return undefined;
    const running = new RunningJob(job, delivery.leaseToken);
    this.active.set(job.id, running);
    if (job.timeout > 0) {
      const grace = job.gracePeriod ?? 0;
      running.after(job.timeout * SECOND, () => this.interrupt(job.id, 'timeout', `execution timeout of ${job.timeout} s passed`));
      running.after((job.timeout + grace) * SECOND, () => {
        void this.giveUp(running, 'timeout', `job did not stop within its timeout of ${job.timeout} s and grace period of ${grace} s`);
      });
    }
    void this.execute(running);
    return running;
  }

  /** Fires the job's signal; the handler decides how to stop. */
  interrupt(jobId: string, kind: AbortKind, message: string): void {
    const running = this.active.get(jobId);
    if (running === undefined || running.abort.signal.aborted) return;
    this.deps.logger.info({ jobId, reason: kind }, `stopping job: ${message}`);
    running.abort.abort(new JobAborted(kind, message));
  }

  /**
   * Settles a job whose handler has not returned: Fail with `type` (the
   * server requeues per the retry policy) and free its slot. The handler
   * keeps running until it returns; its result is ignored.
   */
  giveUp(running: RunningJob, type: 'timeout' | 'shutdown', message: string): Promise<void> {
    this.interrupt(running.id, type, message);
    if (running.isSettled) return running.done;
    running.isSettled = true;
    this.deps.logger.warn({ jobId: running.id, type }, `failing a job whose handler did not stop: ${message}`);
    return this.settle(running, () => this.deps.settlements.fail(running.id, running.leaseToken, sdkJobError(type, message)));
  }

  private async execute(running: RunningJob): Promise<void> {
    const { job } = running;
    const logger = childLogger(this.deps.logger, { jobId: job.id, jobType: job.type, attempt: job.attempt });
    const handler = this.deps.handlers.get(job.type);
    let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
    try {
      if (handler === undefined) throw Object.assign(new Error(`no handler registered for job type "${job.type}"`), { name: 'handler_not_found' });
      const run = compose(this.deps.middleware, async (ctx: JobContext) => handler(ctx.args, ctx));
      outcome = { ok: true, result: await run(this.context(running, logger)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (running.isSettled) {
      running.markDone();
      return;
    }
    running.isSettled = true;
    const reason = running.abort.signal.reason as unknown;
    if (reason instanceof JobAborted && (reason.kind === 'cancelled' || reason.kind === 'reclaimed')) {
      // The job was cancelled or taken back: an answer would be refused.
      logger.info({ reason: reason.kind }, 'job stopped');
      this.release(running);
      return;
    }
    if (outcome.ok) {
      await this.settle(running, () => this.deps.settlements.ack(job.id, running.leaseToken, outcome.result));
      return;
    }
    const error = reason instanceof JobAborted ? sdkJobError(reason.kind, reason.message) : toJobError(outcome.error);
    if (!(reason instanceof JobAborted)) logger.warn({ err: outcome.error }, 'job failed');
    await this.settle(running, () => this.deps.settlements.fail(job.id, running.leaseToken, error));
  }

  private async settle(running: RunningJob, send: () => Promise<{ ok: boolean; code?: string; message?: string }>): Promise<void> {
    this.release(running);
    const outcome = await send();
    if (!outcome.ok) this.deps.logger.warn({ jobId: running.id, code: outcome.code, reason: outcome.message }, 'the server refused the settlement');
  }

  /** Frees the job's slot: it no longer counts as held. */
  private release(running: RunningJob): void {
    if (this.active.get(running.id) === running) this.active.delete(running.id);
    running.markDone();
  }

  private context(running: RunningJob, logger: Logger): JobContext {
    const { job, leaseToken } = running;
    const { client, workerId } = this.deps;
    const report = async (fields: { progress?: number; data?: Record<string, unknown>; checkpoint?: unknown }): Promise<void> => {
      try {
        await client.reportProgress({ workerId, jobId: job.id, leaseToken, ...fields });
      } catch (error) {
        logger.warn({ err: error }, 'could not report progress');
      }
    };
    return {
      job,
      args: job.args,
      attempt: job.attempt,
      signal: running.abort.signal,
      lastCheckpoint: job.lastCheckpoint,
      logger,
      heartbeat: async () => {
        await client.extendLease({ workerId, jobId: job.id, leaseToken });
      },
      progress: (value, data) => report(data === undefined ? { progress: value } : { progress: value, data }),
      checkpoint: (state) => report({ checkpoint: state }),
    };
  }
}

function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  const withChild = logger as Logger & { child?: (bindings: Record<string, unknown>) => Logger };
  return typeof withChild.child === 'function' ? withChild.child(bindings) : logger;
}
