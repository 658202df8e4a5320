import { trace, type Tracer } from '@opentelemetry/api';
import type { Job as WireJob, JobError } from '../gen/ojs/server/v1/job';
import type { Delivery, WorkerServiceClient } from '../gen/ojs/server/v1/worker_service';
import { failureForRefusedAck, failureForRefusedFail, JobAborted, sdkJobError, toJobError, type AbortKind } from './errors';
import { ExecutionSpan, SDK_TRACER } from './execution-span';
import { jobFromWire, type Job } from './job';
import type { JobContext, JobHandler } from './job-context';
import type { Logger } from './logger';
import { Wakeup } from '../lib/wakeup';
import { compose, type Middleware } from './middleware';
import type { SettlementOutcome, Settlements } from './settlements';

/** Execution middleware: wraps every handler call, e.g. for tracing, metrics or error reporting. */
export type ExecutionMiddleware = Middleware<JobContext, unknown>;

/** One job this worker holds, from delivery until its settlement is sent. */
export class RunningJob {
  /** Set once the outcome is decided; a later one is ignored. */
  isSettled = false;
  /** When this worker started it (performance.now()), for the worker-side timeout. */
  readonly startedAt = performance.now();
  /** Made on first use: most handlers finish without anyone asking for the signal. */
  private controller: AbortController | undefined;

  constructor(
    readonly job: WireJob,
    readonly leaseToken: string,
    /** The span its handler runs in, ended with its outcome. */
    readonly span: ExecutionSpan,
  ) {}

  get id(): string {
    return this.job.id;
  }

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /** Why the handler was told to stop, if it was. */
  get abortReason(): JobAborted | undefined {
    const reason: unknown = this.controller?.signal.reason;
    // abort() is the only way the private controller aborts, always with a JobAborted.
    return reason instanceof JobAborted ? reason : undefined;
  }

  abort(reason: JobAborted): void {
    (this.controller ??= new AbortController()).abort(reason);
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
  /** Notified whenever a job is released (for a drain to wait on). */
  readonly released = new Wakeup();
  private readonly run: (ctx: JobContext) => Promise<unknown>;
  /** The global API's tracer: a no-op until the application registers an OpenTelemetry SDK, before or after the worker starts. */
  private readonly tracer: Tracer = trace.getTracer(SDK_TRACER);
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly deps: JobRunnerDeps) {
    // Composed once: middleware is registered before the worker starts.
    this.run = compose(deps.middleware, async (ctx: JobContext) => {
      const handler = deps.handlers.get(ctx.job.type);
      if (handler === undefined)
        throw Object.assign(new Error(`no handler registered for job type "${ctx.job.type}"`), { name: 'handler_not_found' });
      return handler(ctx.args, ctx);
    });
  }

  start(delivery: Delivery): RunningJob | undefined {
    const job = delivery.job;
    if (job === undefined || this.active.has(job.id)) return undefined;
    const running = new RunningJob(job, delivery.leaseToken, new ExecutionSpan(this.tracer, job, this.deps.workerId));
    this.active.set(job.id, running);
    // Timeouts are whole seconds: one sweep a second checks them all, instead of timers per job.
    if (job.timeout > 0) this.sweeper ??= setInterval(() => this.sweepTimeouts(), SECOND).unref();
    void this.execute(running);
    return running;
  }

  /** Fires the job's signal; the handler decides how to stop. */
  interrupt(jobId: string, kind: AbortKind, message: string): void {
    const running = this.active.get(jobId);
    if (running === undefined || running.abortReason !== undefined) return;
    this.deps.logger.info({ jobId, reason: kind }, `stopping job: ${message}`);
    running.abort(new JobAborted(kind, message));
  }

  /**
   * Settles a job whose handler has not returned: Fail with `type` (the
   * server requeues per the retry policy) and free its slot. The handler
   * keeps running until it returns; its result is ignored.
   */
  async giveUp(running: RunningJob, type: 'timeout' | 'shutdown', message: string): Promise<void> {
    this.interrupt(running.id, type, message);
    if (running.isSettled) return;
    running.isSettled = true;
    this.deps.logger.warn({ jobId: running.id, type }, `failing a job whose handler did not stop: ${message}`);
    const error = sdkJobError(type, message);
    running.span.failed(error, running.job.attempt);
    await this.settle(running, () => this.reportFailure(running, error));
  }

  /** Stops the timeout sweep (the worker is stopping). */
  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweepTimeouts(): void {
    const now = performance.now();
    for (const running of this.active.values()) {
      const { timeout, gracePeriod } = running.job;
      if (timeout <= 0) continue;
      const elapsed = now - running.startedAt;
      const grace = gracePeriod ?? 0;
      if (elapsed >= (timeout + grace) * SECOND) {
        void this.giveUp(running, 'timeout', `job did not stop within its timeout of ${timeout} s and grace period of ${grace} s`);
      } else if (elapsed >= timeout * SECOND) {
        this.interrupt(running.id, 'timeout', `execution timeout of ${timeout} s passed`);
      }
    }
  }

  private async execute(running: RunningJob): Promise<void> {
    const context = new RunningJobContext(running, this.deps);
    let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await running.span.run(() => this.run(context)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (running.isSettled) return;
    running.isSettled = true;
    const reason = running.abortReason;
    if (reason !== undefined && (reason.kind === 'cancelled' || reason.kind === 'reclaimed')) {
      // The job was cancelled or taken back: an answer would be refused.
      context.logger.info({ reason: reason.kind }, 'job stopped');
      if (reason.kind === 'cancelled') running.span.cancelled();
      else running.span.failed(sdkJobError(reason.kind, reason.message), running.job.attempt);
      this.release(running);
      return;
    }
    if (outcome.ok) {
      running.span.succeeded();
      await this.settle(running, () => this.acknowledge(running, outcome.result));
      return;
    }
    const error = reason !== undefined ? sdkJobError(reason.kind, reason.message) : toJobError(outcome.error);
    if (reason === undefined) context.logger.warn({ err: outcome.error }, 'job failed');
    running.span.failed(error, running.job.attempt, outcome.error);
    await this.settle(running, () => this.reportFailure(running, error));
  }

  /** Acks; a result the server refuses as too large fails the job instead, so it does not sit active until its timeout. */
  private async acknowledge(running: RunningJob, result: unknown): Promise<SettlementOutcome> {
    const acked = await this.deps.settlements.ack(running.id, running.leaseToken, result);
    const failure = failureForRefusedAck(acked);
    if (failure === undefined) return acked;
    this.deps.logger.warn({ jobId: running.id, reason: failure.message }, 'the server refused the result as too large; failing the job');
    return this.deps.settlements.fail(running.id, running.leaseToken, failure);
  }

  /** Fails; a report the server refuses for its content goes again reduced, so the job does not sit active until its timeout. */
  private async reportFailure(running: RunningJob, error: JobError): Promise<SettlementOutcome> {
    const failed = await this.deps.settlements.fail(running.id, running.leaseToken, error);
    const reduced = failureForRefusedFail(failed, error);
    if (reduced === undefined) return failed;
    this.deps.logger.warn(
      { jobId: running.id, reason: reduced.message },
      'the server refused the error report; failing the job with a reduced one',
    );
    return this.deps.settlements.fail(running.id, running.leaseToken, reduced);
  }

  private async settle(running: RunningJob, send: () => Promise<SettlementOutcome>): Promise<void> {
    this.release(running);
    const outcome = await send();
    if (!outcome.ok)
      this.deps.logger.warn({ jobId: running.id, code: outcome.code, reason: outcome.message }, 'the server refused the settlement');
  }

  /** Frees the job's slot: it no longer counts as held. */
  private release(running: RunningJob): void {
    if (this.active.get(running.id) === running) this.active.delete(running.id);
    this.released.notify();
  }
}

/** What a handler gets: methods on the prototype, so a job costs one small object. */
class RunningJobContext implements JobContext {
  private jobLogger: Logger | undefined;
  /** The envelope with its enums named, made only for a handler that reads it. */
  private namedJob: Job | undefined;

  constructor(
    private readonly running: RunningJob,
    private readonly deps: Pick<JobRunnerDeps, 'client' | 'workerId' | 'logger'>,
  ) {}

  get job(): Job {
    return (this.namedJob ??= jobFromWire(this.running.job));
  }

  get args(): unknown[] {
    // ts-proto types google.protobuf.Value as any; the handler sees unknown.
    const args: unknown[] = this.running.job.args;
    return args;
  }

  get attempt(): number {
    return this.running.job.attempt;
  }

  get signal(): AbortSignal {
    return this.running.signal;
  }

  get lastCheckpoint(): unknown {
    const lastCheckpoint: unknown = this.running.job.lastCheckpoint;
    return lastCheckpoint;
  }

  get parentResults(): Record<string, unknown> | undefined {
    const { job } = this.running;
    if (job.workflowId === '') return undefined;
    // ts-proto types google.protobuf.Struct's fields as any; the handler sees unknown.
    const results: Record<string, unknown> = job.parentResults ?? {};
    return results;
  }

  get workflowId(): string | undefined {
    const { workflowId } = this.running.job;
    return workflowId === '' ? undefined : workflowId;
  }

  get workflowStep(): string | undefined {
    return this.running.job.workflowId === '' ? undefined : this.running.job.workflowStep;
  }

  /** A child logger costs a serialization of its bindings: made only for a job that logs. */
  get logger(): Logger {
    const { job } = this.running;
    return (this.jobLogger ??= childLogger(this.deps.logger, { jobId: job.id, jobType: job.type, attempt: job.attempt }));
  }

  async heartbeat(): Promise<void> {
    await this.deps.client.extendLease({ workerId: this.deps.workerId, jobId: this.running.id, leaseToken: this.running.leaseToken });
  }

  progress(value: number, data?: Record<string, unknown>): Promise<void> {
    return this.report(data === undefined ? { progress: value } : { progress: value, data });
  }

  checkpoint(state: unknown): Promise<void> {
    return this.report({ checkpoint: state });
  }

  private async report(fields: { progress?: number; data?: Record<string, unknown>; checkpoint?: unknown }): Promise<void> {
    try {
      await this.deps.client.reportProgress({
        workerId: this.deps.workerId,
        jobId: this.running.id,
        leaseToken: this.running.leaseToken,
        ...fields,
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'could not report progress');
    }
  }
}

function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  const withChild = logger as Logger & { child?: (bindings: Record<string, unknown>) => Logger };
  return typeof withChild.child === 'function' ? withChild.child(bindings) : logger;
}
