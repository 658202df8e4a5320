import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { ClientError, Status } from 'nice-grpc';
import { WorkerState, type BeatResponse, type Delivery } from '../gen/ojs/server/v1/worker_service';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import { BeatLoop } from './beat-loop';
import { connect, type Connection } from './connection';
import { pid1Warning } from './container';
import { FetchLoop } from './fetch-loop';
import type { JobHandler } from './job-context';
import { JobRunner, type ExecutionMiddleware } from './job-runner';
import { ReadinessEndpoint } from './readiness';
import { Settlements } from './settlements';
import { installSignalHandlers } from './signals';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './worker-options';

/** Where the worker is in its life (worker-protocol section 2, plus before and after). */
export type WorkerPhase = 'created' | 'starting' | 'running' | 'quiet' | 'stopping' | 'stopped';

/** How long shutdown steps that need the server wait for it before going on without. */
const SHUTDOWN_CALL_MS = 2_000;
/** How often a draining worker logs what is left (graceful-shutdown 5.2). */
const DRAIN_LOG_MS = 5_000;

/**
 * An OJS worker: registers, keeps the Beat and Fetch streams, runs handlers
 * within its concurrency, honours the server's directives, and shuts down
 * gracefully (quiet, drain within the grace period, fail what is left with
 * `shutdown`, a final terminate beat, deregister).
 *
 * ```ts
 * const worker = new Worker({ queues: ['email'], concurrency: 20 });
 * worker.handle('email.send', async ([to], ctx) => send(to, { signal: ctx.signal }));
 * worker.run().then((code) => process.exit(code));
 * ```
 *
 * Events: 'phase' (phase), 'stopped'.
 */
export class Worker extends EventEmitter {
  readonly options: ResolvedWorkerOptions;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly middleware: ExecutionMiddleware[] = [];
  private currentPhase: WorkerPhase = 'created';
  private parts: Parts | undefined;
  private started: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  /** Aborted by any stop: ends waiting for the server. */
  private readonly stopRequested = new AbortController();
  /** Aborted by a forced stop: ends the drain. */
  private readonly forced = new AbortController();
  private heartbeatIntervalMs = 5_000;
  private registering: Promise<void> | undefined;
  /** Once the quiet beat of a shutdown is out, beats report terminate. */
  private reportsTerminate = false;

  constructor(options: WorkerOptions = {}) {
    super();
    this.options = resolveWorkerOptions(options);
  }

  get workerId(): string {
    return this.options.workerId;
  }

  get phase(): WorkerPhase {
    return this.currentPhase;
  }

  /** Jobs running now. */
  get activeJobIds(): string[] {
    return [...(this.parts?.runner.active.keys() ?? [])];
  }

  /**
   * Registers the handler of a job type, typed by its args and its result:
   * `worker.handle<[to: string, subject: string], { messageId: string }>('email.send', ...)`.
   */
  handle<Args extends readonly unknown[] = unknown[], Result = unknown>(type: string, handler: JobHandler<Args, Result>): this {
    // The args are whatever the producer sent: Args is the handler's declaration of them, taken on its word
    // (as JSON.parse's result is), so the handler is kept as one of unknown args.
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion
    this.handlers.set(type, handler as unknown as JobHandler);
    return this;
  }

  /** Adds execution middleware; the first added runs outermost. */
  use(middleware: ExecutionMiddleware): this {
    this.middleware.push(middleware);
    return this;
  }

  /** Connects and registers (waiting for the server if it is not up yet), then starts taking jobs. */
  start(): Promise<void> {
    this.started ??= this.startOnce();
    return this.started;
  }

  /**
   * Starts, then runs until stopped by a signal or a server directive:
   * SIGTERM and SIGINT stop gracefully (a second one forces), SIGTSTP quiets,
   * SIGCONT resumes. Resolves with the exit code: 0 after a graceful stop, 1
   * after a forced one or a failed start (logged).
   */
  async run(): Promise<number> {
    const uninstall = installSignalHandlers(this, this.options.logger);
    try {
      await this.start();
      await this.waitUntilStopped();
    } catch (error) {
      this.options.logger.error({ err: error }, 'the worker could not start');
      await this.stop({ force: true });
      return 1;
    } finally {
      uninstall();
    }
    return this.forced.signal.aborted ? 1 : 0;
  }

  /** Stops taking jobs; running ones go on (SIGTSTP, or the server's quiet directive). */
  quiet(): void {
    if (this.currentPhase !== 'running') return;
    this.setPhase('quiet');
    this.tellServer();
  }

  /** Takes jobs again after quiet (SIGCONT, or the server's running directive). */
  resume(): void {
    if (this.currentPhase !== 'quiet') return;
    this.setPhase('running');
    void this.parts?.beats.beatNow();
    this.parts?.fetches.poke();
  }

  /**
   * Graceful stop: quiet, drain for up to the grace period, then fail what is
   * left with `shutdown`. `force` skips the drain; calling it again with
   * `force` while a graceful stop runs cuts the drain short.
   */
  stop(options: { force?: boolean } = {}): Promise<void> {
    this.stopRequested.abort();
    if (options.force === true) this.forced.abort();
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  /** Resolves once the worker has stopped, however that came about. */
  waitUntilStopped(): Promise<void> {
    if (this.currentPhase === 'stopped') return Promise.resolve();
    return new Promise((resolve) => this.once('stopped', () => resolve()));
  }

  private async startOnce(): Promise<void> {
    const { options } = this;
    const logger = options.logger;
    this.setPhase('starting');
    const warning = pid1Warning();
    if (warning !== undefined) logger.warn({}, warning);
    const connection = connect({ address: options.address, ...options.security });
    const settlements = new Settlements(connection.workers, options.workerId, logger, {
      coalesceMs: options.settlementCoalesceMs,
      maxBatch: 200,
    });
    const runner = new JobRunner({
      workerId: options.workerId,
      client: connection.workers,
      settlements,
      logger,
      handlers: this.handlers,
      middleware: this.middleware,
    });
    const onWorkerUnknown = (): Promise<void> => this.registerAgain();
    const beats = new BeatLoop({
      streams: connection.workerStreams,
      workerId: options.workerId,
      logger,
      intervalMs: () => this.heartbeatIntervalMs,
      report: () => ({ state: this.reportedState(), activeJobIds: [...runner.active.keys()] }),
      onMessage: (response, stateIsCurrent) => this.onBeatMessage(response, stateIsCurrent),
      onWorkerUnknown,
    });
    const fetches = new FetchLoop({
      streams: connection.workerStreams,
      workerId: options.workerId,
      logger,
      wantsJobs: () => this.currentPhase === 'running',
      onDeliveries: (deliveries) => this.onDeliveries(deliveries),
      onWorkerUnknown,
    });
    this.parts = { connection, settlements, runner, beats, fetches, readiness: undefined };
    try {
      await this.register(connection, this.stopRequested.signal);
    } catch (error) {
      if (this.stopRequested.signal.aborted) return; // stopped while waiting for the server
      throw error;
    }
    if (options.readinessPort !== undefined) {
      this.parts.readiness = await ReadinessEndpoint.listen(
        options.readinessPort,
        options.readinessHost,
        () => this.currentPhase === 'running',
      );
    }
    if (this.stopped !== undefined) return;
    this.setPhase('running');
    beats.start();
    fetches.start();
    logger.info(
      {
        workerId: options.workerId,
        address: options.address,
        queues: options.queues,
        concurrency: options.concurrency,
        readinessPort: this.parts.readiness?.port,
      },
      'worker started',
    );
  }

  /** Registers, retrying while the server is unreachable. */
  private async register(connection: Connection, signal: AbortSignal): Promise<void> {
    const { options } = this;
    const backoff = new Backoff(200, 5_000);
    for (;;) {
      try {
        const reply = await connection.workers.register({
          workerId: options.workerId,
          hostname: hostname(),
          pid: process.pid,
          queues: options.queues,
          concurrency: options.concurrency,
          labels: options.labels,
          startedAt: new Date(Date.now() - process.uptime() * 1000),
        });
        const interval = reply.heartbeatInterval;
        if (interval !== undefined) this.heartbeatIntervalMs = interval.seconds * 1000 + Math.round(interval.nanos / 1e6);
        return;
      } catch (error) {
        const retryable = error instanceof ClientError && (error.code === Status.UNAVAILABLE || error.code === Status.DEADLINE_EXCEEDED);
        if (!retryable || signal.aborted) throw error;
        options.logger.warn({ err: error }, 'cannot reach the server to register; retrying');
        await pause(backoff.next(), signal);
      }
    }
  }

  /** Registers again after the server forgot the worker; beat and fetch share one attempt. */
  private registerAgain(): Promise<void> {
    if (this.registering === undefined) this.options.logger.warn({}, 'the server no longer knows this worker; registering again');
    this.registering ??= this.register(this.parts!.connection, this.stopRequested.signal)
      .catch((error: unknown) => {
        if (!(error instanceof ClientError && error.code === Status.ALREADY_EXISTS))
          this.options.logger.error({ err: error }, 'could not register again');
      })
      .finally(() => (this.registering = undefined));
    return this.registering;
  }

  private reportedState(): WorkerState {
    switch (this.currentPhase) {
      case 'quiet':
        return WorkerState.WORKER_STATE_QUIET;
      case 'stopping':
      case 'stopped':
        return this.reportsTerminate ? WorkerState.WORKER_STATE_TERMINATE : WorkerState.WORKER_STATE_QUIET;
      case 'created':
      case 'starting':
      case 'running':
        return WorkerState.WORKER_STATE_RUNNING;
    }
    const unknownPhase: never = this.currentPhase;
    throw new Error(`unknown worker phase: ${String(unknownPhase)}`);
  }

  private onBeatMessage(response: BeatResponse, stateIsCurrent: boolean): void {
    const { runner } = this.parts!;
    for (const id of response.cancelledJobIds) runner.interrupt(id, 'cancelled', 'the job was cancelled');
    for (const id of response.timedOutJobIds) runner.interrupt(id, 'timeout', "the job's execution timeout passed");
    for (const id of response.reclaimedJobIds) runner.interrupt(id, 'reclaimed', 'the server took the job back');
    // A message sent before the server saw our latest state change would undo it.
    if (!stateIsCurrent) return;
    switch (response.state) {
      case WorkerState.WORKER_STATE_QUIET:
        this.quiet();
        return;
      case WorkerState.WORKER_STATE_RUNNING:
        this.resume();
        return;
      case WorkerState.WORKER_STATE_TERMINATE:
        if (this.currentPhase !== 'stopping' && this.currentPhase !== 'stopped') {
          this.options.logger.info({}, 'the server directs this worker to terminate');
          void this.stop();
        }
        return;
      case WorkerState.WORKER_STATE_UNSPECIFIED:
      case WorkerState.UNRECOGNIZED:
        // No directive: the worker keeps its state.
        return;
    }
  }

  private onDeliveries(deliveries: Delivery[]): void {
    const { runner } = this.parts!;
    for (const delivery of deliveries) {
      runner.start(delivery);
    }
  }

  /** Tells the server of a state change at once; if the Fetch stream outlives the quiet beat, cancels it. */
  private tellServer(): void {
    const parts = this.parts;
    if (parts === undefined) return;
    void (async () => {
      const answer = await parts.beats.beatNow(SHUTDOWN_CALL_MS);
      if (answer === undefined && this.currentPhase !== 'running') parts.fetches.cancelStream();
    })();
  }

  private async shutdown(): Promise<void> {
    const { logger, shutdownGracePeriodMs } = this.options;
    try {
      await this.started;
    } catch {
      // Never started: nothing to drain.
    }
    const parts = this.parts;
    if (parts === undefined || this.currentPhase === 'created' || this.currentPhase === 'starting') {
      this.finish(parts);
      return;
    }
    const { runner, beats, fetches, settlements } = parts;
    this.setPhase('stopping');
    logger.info(
      { activeJobs: runner.active.size, gracePeriodMs: shutdownGracePeriodMs, forced: this.forced.signal.aborted },
      'stopping: no new jobs',
    );
    // Phase 1, quiet: the server ends the Fetch stream once it hears it.
    const quietAnswer = await beats.beatNow(SHUTDOWN_CALL_MS);
    if (quietAnswer === undefined) fetches.cancelStream();
    this.reportsTerminate = true;
    void beats.beatNow(SHUTDOWN_CALL_MS);
    // Phase 2, drain: beats go on meanwhile.
    await this.drain(runner, shutdownGracePeriodMs);
    // Phase 3, stop: fail what is left so that it is retried at once.
    const leftovers = [...runner.active.values()];
    if (leftovers.length > 0)
      logger.warn({ jobIds: leftovers.map((j) => j.id) }, 'grace period over: failing the jobs still running with error type shutdown');
    await Promise.all(leftovers.map((job) => runner.giveUp(job, 'shutdown', 'the worker shut down before the job finished')));
    runner.stop();
    await fetches.stop();
    if (!(await settlements.drain(SHUTDOWN_CALL_MS * 2)))
      logger.warn({}, 'some acknowledgements could not be delivered; the server will recover those jobs');
    await beats.beatNow(SHUTDOWN_CALL_MS);
    await beats.stop();
    try {
      await parts.connection.workers.deregister({ workerId: this.workerId }, { signal: AbortSignal.timeout(SHUTDOWN_CALL_MS) });
    } catch (error) {
      logger.warn({ err: error }, 'could not deregister; the server will notice the worker is gone');
    }
    settlements.close();
    this.finish(parts);
  }

  /** Waits for running jobs to finish, the grace period to end, or a forced stop; logs progress every 5 s. */
  private async drain(runner: JobRunner, gracePeriodMs: number): Promise<void> {
    if (runner.active.size === 0 || this.forced.signal.aborted) return;
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<'over'>((resolve) => {
      const end = (): void => resolve('over');
      timer = setTimeout(end, gracePeriodMs);
      this.forced.signal.addEventListener('abort', end, { once: true });
    });
    const log = setInterval(() => this.options.logger.info({ remaining: runner.active.size }, 'draining'), DRAIN_LOG_MS);
    try {
      while (runner.active.size > 0) {
        if ((await Promise.race([runner.released.wait(), over])) === 'over') break;
      }
    } finally {
      clearTimeout(timer);
      clearInterval(log);
    }
  }

  private finish(parts: Parts | undefined): void {
    parts?.connection.close();
    void parts?.readiness?.close();
    this.setPhase('stopped');
    this.options.logger.info({ workerId: this.workerId }, 'worker stopped');
    this.emit('stopped');
  }

  private setPhase(phase: WorkerPhase): void {
    if (this.currentPhase === phase) return;
    this.currentPhase = phase;
    this.emit('phase', phase);
  }
}

interface Parts {
  connection: Connection;
  settlements: Settlements;
  runner: JobRunner;
  beats: BeatLoop;
  fetches: FetchLoop;
  readiness: ReadinessEndpoint | undefined;
}
