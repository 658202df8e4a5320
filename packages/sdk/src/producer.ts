import { Metadata, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import type { DeepPartial, Job as WireJob } from '../gen/ojs/server/v1/job';
import type { Workflow as WireWorkflow } from '../gen/ojs/server/v1/workflow_service';
import { resolveChannelSecurity, type SecurityOptions } from './channel-security';
import { connect, type Connection } from './connection';
import { jobFromWire, type Job } from './job';
import { wireFields, type JobSpec } from './job-spec';
import { outcomeOf } from './job-outcome';
import { scheduleFromWire, toWireSchedule, type Schedule, type ScheduleSpec } from './schedules';
import { waitUntilFinished, type ResultOptions } from './job-waiter';
import { compose, type Middleware } from './middleware';
import { isSizeRefusal } from './refusals';
import { activeTraceMeta } from './trace-context';
import { hasStatus, retryWhileUnreachable } from './unreachable';
import { toWireDefinition, workflowFromWire, type Workflow, type WorkflowSpec } from './workflows';

/** Enqueue middleware: sees (and may change) every job before it is sent; resolves with the stored envelope. */
export type EnqueueMiddleware = Middleware<JobSpec, Job>;

/**
 * Most jobs in one Enqueue call: the server refuses more (INVALID_ARGUMENT).
 * An enqueueAll is atomic, so a larger one cannot be split.
 */
const MAX_ENQUEUE_BATCH = 1_000;
/** The longest wait one WaitForJob call may ask for (the server's limit). */
const MAX_RESULT_CALL_WAIT_MS = 3_600_000;

export interface ProducerOptions extends SecurityOptions {
  /** host:port of the server. Default: OJS_SERVER, else 127.0.0.1:9090. */
  address?: string;
  /** Most jobs in one coalesced Enqueue call, from 1 to 1,000. Default 500. */
  maxBatch?: number;
  /** How many times a call is tried again while the server is unreachable. Default 5. */
  retries?: number;
  /**
   * Longest one WaitForJob call of `result()` waits on the server before it
   * answers and is made again, in milliseconds, up to an hour. Default 30 s
   * (the server's own default); lower it behind a proxy that cuts calls
   * idle for less.
   */
  resultCallWaitMs?: number;
}

/**
 * A job as an Enqueue request carries it: the spec's fields and the id the
 * producer chose (the request's encoder completes the message once).
 */
type OutgoingJob = DeepPartial<WireJob> & { id: string };

interface Waiting {
  spec: OutgoingJob;
  resolve: (job: Job) => void;
  reject: (error: unknown) => void;
}

/**
 * Enqueues jobs. Jobs enqueued one by one in the same tick of the event loop
 * travel in one Enqueue call (a unary call costs the server far more than a
 * job in it), each caller still getting its own stored envelope or error.
 * Every job gets a client-side UUIDv7 id unless it has one, which makes a
 * retried call safe: a job the server already took is not stored twice.
 * A job enqueued while a span is active carries its trace context. And
 * `result()` waits for a job to finish.
 */
export class Producer {
  private readonly connection: Connection;
  private readonly middleware: EnqueueMiddleware[] = [];
  private waiting: Waiting[] = [];
  private isFlushScheduled = false;
  private readonly maxBatch: number;
  private readonly retries: number;
  private readonly resultCallWaitMs: number;

  constructor(options: ProducerOptions = {}) {
    this.maxBatch = options.maxBatch ?? 500;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1 || this.maxBatch > MAX_ENQUEUE_BATCH)
      throw new RangeError(`maxBatch must be a whole number from 1 to ${MAX_ENQUEUE_BATCH} (the server's limit), got ${this.maxBatch}`);
    this.retries = options.retries ?? 5;
    this.resultCallWaitMs = options.resultCallWaitMs ?? 30_000;
    if (!Number.isInteger(this.resultCallWaitMs) || this.resultCallWaitMs < 1 || this.resultCallWaitMs > MAX_RESULT_CALL_WAIT_MS)
      throw new RangeError(
        `resultCallWaitMs must be a whole number of milliseconds from 1 to ${MAX_RESULT_CALL_WAIT_MS} (the server's limit), got ${this.resultCallWaitMs}`,
      );
    const address = options.address ?? process.env['OJS_SERVER'] ?? '127.0.0.1:9090';
    this.connection = connect({ address, ...resolveChannelSecurity(address, options) });
  }

  /** Adds enqueue middleware; the first added runs outermost. */
  use(middleware: EnqueueMiddleware): this {
    this.middleware.push(middleware);
    return this;
  }

  /** Enqueues one job; resolves with the stored envelope. */
  enqueue(spec: JobSpec): Promise<Job> {
    return compose(this.middleware, (job: JobSpec) => this.batched(job))(spec);
  }

  /**
   * Enqueues jobs atomically in one call: all are stored, or none. Each job
   * goes through the middleware; one that a middleware does not pass on is
   * left out of the call. At most 1,000 jobs (the server's limit on one
   * call): more are refused before anything is sent.
   */
  async enqueueAll(specs: readonly JobSpec[]): Promise<Job[]> {
    if (specs.length > MAX_ENQUEUE_BATCH)
      throw new RangeError(
        `enqueueAll takes at most ${MAX_ENQUEUE_BATCH} jobs (the server's limit on one Enqueue), got ${specs.length}; ` +
          'an atomic batch cannot be split: use enqueue() for jobs that need not be stored together',
      );
    if (this.middleware.length === 0) return this.send(specs.map(toJob));
    const passed = new Map<number, OutgoingJob>();
    const position = new Map<number, number>();
    const stored = deferred<Job[]>();
    const reached = specs.map(() => deferred<void>());
    const chains = specs.map((spec, i) =>
      compose(this.middleware, async (job: JobSpec) => {
        passed.set(i, toJob(job));
        reached[i]!.resolve();
        return (await stored.promise)[position.get(i)!]!;
      })(spec),
    );
    for (const chain of chains) chain.catch(() => {}); // surfaced by the Promise.all below
    // Each job reaches the end of its chain, or its middleware settles without passing it on.
    await Promise.all(chains.map((chain, i) => Promise.race([reached[i]!.promise, chain.then(noop, noop)])));
    const order = [...passed.keys()].toSorted((a, b) => a - b);
    order.forEach((index, at) => position.set(index, at));
    try {
      stored.resolve(await this.send(order.map((index) => passed.get(index)!)));
    } catch (error) {
      stored.reject(error);
      throw error;
    }
    return Promise.all(chains);
  }

  /**
   * Waits for a job to finish and resolves with its result, the value its
   * handler returned (Temporal's `handle.result()`, BullMQ's
   * `job.waitUntilFinished()`). Rejects with a JobFailedError carrying the
   * last error when the job was discarded, with a JobCancelledError when it
   * was cancelled, with a JobWaitTimeoutError when `timeoutMs` passes first,
   * and with the signal's reason when `signal` aborts. Takes the job's id or
   * the job `enqueue` resolved with. The server is asked with WaitForJob,
   * which answers as soon as the job finishes, on whichever replica it
   * finished; a job the server no longer holds (never enqueued, or removed
   * after its retention period) is refused with NOT_FOUND.
   *
   * ```ts
   * const job = await producer.enqueue({ type: 'report.build', args: [42] });
   * const report = await producer.result(job, { timeoutMs: 60_000 });
   * ```
   */
  async result(job: string | Pick<Job, 'id'>, options: ResultOptions = {}): Promise<unknown> {
    const jobId = typeof job === 'string' ? job : job.id;
    const finished = await waitUntilFinished(this.connection.jobs, jobId, options, {
      retries: this.retries,
      callWaitMs: this.resultCallWaitMs,
    });
    return outcomeOf(finished);
  }

  /**
   * Registers a cron schedule, or replaces the one with its name (upsert:
   * register every schedule at start-up and the server keeps them in
   * step). Each tick enqueues `spec.job` once across all server replicas.
   *
   * ```ts
   * await producer.registerSchedule({
   *   name: 'daily-report',
   *   cron: '0 9 * * *',
   *   timezone: 'America/New_York',
   *   job: { type: 'report.generate', queue: 'reports', args: ['daily'] },
   * });
   * ```
   */
  async registerSchedule(spec: ScheduleSpec): Promise<{ schedule: Schedule; created: boolean }> {
    const answer = await this.unary(() => this.connection.schedules.registerSchedule({ schedule: toWireSchedule(spec) }));
    return { schedule: scheduleFromWire(answer.schedule!), created: answer.created };
  }

  /** Removes a schedule; the jobs it made stay. Rejects with NOT_FOUND when there is none. */
  async unregisterSchedule(name: string): Promise<void> {
    await this.unary(() => this.connection.schedules.deleteSchedule({ name }));
  }

  /** One schedule; rejects with NOT_FOUND when there is none. */
  async getSchedule(name: string): Promise<Schedule> {
    return scheduleFromWire((await this.unary(() => this.connection.schedules.getSchedule({ name }))).schedule!);
  }

  /** Every schedule in name order (only paused or only running ones with `paused`), read page by page. */
  async *listSchedules(options: { paused?: boolean } = {}): AsyncGenerator<Schedule> {
    let pageToken = '';
    do {
      const page = await this.unary(() => this.connection.schedules.listSchedules({ pageSize: 0, pageToken, paused: options.paused }));
      yield* page.schedules.map(scheduleFromWire);
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
  }

  /** Stops a schedule's ticks without removing it. */
  async pauseSchedule(name: string): Promise<Schedule> {
    return scheduleFromWire((await this.unary(() => this.connection.schedules.pauseSchedule({ name }))).schedule!);
  }

  /** Restarts a paused schedule from its first tick after now. */
  async resumeSchedule(name: string): Promise<Schedule> {
    return scheduleFromWire((await this.unary(() => this.connection.schedules.resumeSchedule({ name }))).schedule!);
  }

  /**
   * Creates a workflow (ojs-workflows): a chain, group or batch of jobs,
   * nested up to 5 levels, at most 1,000 jobs. The server stores it whole
   * or not at all; the jobs that wait for nothing are available at once.
   * Every job gets a client-side UUIDv7 unless it has one, so a call
   * retried after its answer was lost finds the workflow it stored rather
   * than storing it twice. Enqueue middleware does not see workflow jobs.
   * While a span is active, the workflow's trace continues it.
   *
   * ```ts
   * const workflow = await producer.createWorkflow(
   *   chain({ type: 'order.validate', args: [42] }, group({ type: 'export.csv', args: [] }, { type: 'export.pdf', args: [] })),
   * );
   * ```
   */
  async createWorkflow(spec: WorkflowSpec): Promise<Workflow> {
    const jobs: WireJob[] = [];
    const definition = toWireDefinition(spec, uuidv7, jobs);
    const trace = activeTraceMeta();
    const options =
      trace === undefined ? {} : { metadata: Metadata(trace.tracestate === undefined ? { traceparent: trace.traceparent } : trace) };
    const created = await retryWhileUnreachable(
      async (isRetry) => {
        try {
          return (await this.connection.workflows.createWorkflow({ definition }, options)).workflow!;
        } catch (error) {
          if (!isRetry || !hasStatus(error, Status.ALREADY_EXISTS)) throw error;
          const stored = await this.storedWorkflow(jobs);
          if (stored === undefined) throw error;
          return stored;
        }
      },
      { retries: this.retries },
    );
    return workflowFromWire(created);
  }

  /** A workflow with its steps; rejects with NOT_FOUND when there is none. */
  async getWorkflow(workflowId: string): Promise<Workflow> {
    return workflowFromWire((await this.unary(() => this.connection.workflows.getWorkflow({ workflowId }))).workflow!);
  }

  /**
   * Cancels a workflow: its waiting and pending jobs are cancelled, and so
   * are its active ones (their handlers' signals abort). Rejects with
   * FAILED_PRECONDITION when it has already finished.
   */
  async cancelWorkflow(workflowId: string): Promise<Workflow> {
    return workflowFromWire((await this.unary(() => this.connection.workflows.cancelWorkflow({ workflowId }))).workflow!);
  }

  close(): void {
    this.connection.close();
  }

  /** A call that is safe to make again, retried while the server is unreachable. */
  private unary<T>(call: () => Promise<T>): Promise<T> {
    return retryWhileUnreachable(call, { retries: this.retries });
  }

  private batched(spec: JobSpec): Promise<Job> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ spec: toJob(spec), resolve, reject });
      if (this.waiting.length >= this.maxBatch) this.flush();
      else if (!this.isFlushScheduled) {
        this.isFlushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.isFlushScheduled = false;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length > 0) void this.sendBatch(batch);
  }

  /**
   * One call for the batch. Enqueue is all-or-none, so when the server
   * refuses the batch for one bad job (or for its size), each job is sent on
   * its own and only the bad one fails.
   */
  private async sendBatch(batch: Waiting[]): Promise<void> {
    try {
      const stored = await this.send(batch.map((w) => w.spec));
      batch.forEach((w, i) => w.resolve(stored[i]!));
    } catch (error) {
      if (!mayPassAlone(error) || batch.length === 1) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(batch.map((w) => this.sendBatch([w])));
    }
  }

  /** Sends, retrying while the server is unreachable. */
  private async send(jobs: OutgoingJob[]): Promise<Job[]> {
    const stored = await retryWhileUnreachable((isRetry) => this.tryEnqueue(jobs, isRetry), { retries: this.retries });
    return stored.map(jobFromWire);
  }

  /**
   * One Enqueue call. A retry that finds the ids taken may follow a try
   * that was stored but whose answer was lost: Enqueue is all-or-none, so
   * then every id is there, and the stored jobs are the answer. When only
   * some are, they are another producer's jobs and the refusal stands.
   */
  private async tryEnqueue(jobs: OutgoingJob[], isRetry: boolean): Promise<WireJob[]> {
    try {
      return (await this.connection.jobs.enqueue({ jobs, pending: false })).jobs;
    } catch (error) {
      if (!isRetry || !hasStatus(error, Status.ALREADY_EXISTS)) throw error;
      const stored = (await Promise.all(jobs.map((job) => this.storedJob(job.id)))).filter((job) => job !== undefined);
      if (stored.length < jobs.length) throw error;
      return stored;
    }
  }

  /**
   * The workflow an earlier try of a retried CreateWorkflow stored: the
   * workflow of the first job sent, if every job sent is one of its jobs
   * (otherwise the ids are another producer's, and the refusal stands).
   */
  private async storedWorkflow(jobs: WireJob[]): Promise<WireWorkflow | undefined> {
    const first = jobs[0] === undefined ? undefined : await this.storedJob(jobs[0].id);
    if (first === undefined || first.workflowId === '') return undefined;
    const workflow = (await this.connection.workflows.getWorkflow({ workflowId: first.workflowId })).workflow;
    const ids = new Set(workflow?.steps.map((step) => step.jobId));
    return jobs.every((job) => ids.has(job.id)) ? workflow : undefined;
  }

  /** The job the server holds under `id`, or undefined if it holds none. */
  private async storedJob(id: string): Promise<WireJob | undefined> {
    try {
      return (await this.connection.jobs.getJob({ jobId: id })).job;
    } catch (error) {
      if (hasStatus(error, Status.NOT_FOUND)) return undefined;
      throw error;
    }
  }
}

/**
 * Whether jobs of a refused batch may pass on their own: the server refused
 * one job's content (INVALID_ARGUMENT), its id (ALREADY_EXISTS) or its size,
 * or the size of the whole call, but not a full store.
 */
function mayPassAlone(error: unknown): boolean {
  return hasStatus(error, Status.INVALID_ARGUMENT) || hasStatus(error, Status.ALREADY_EXISTS) || isSizeRefusal(error);
}

/**
 * The job as sent: the spec with a client-side id unless it has one, and
 * the caller's active trace context in meta unless it carries a traceparent
 * of its own (ojs-distributed-tracing 6.1), so that the job's spans join the
 * caller's trace. A tracestate belongs to its traceparent: it is replaced
 * (or dropped) with it.
 */
function toJob(spec: JobSpec): OutgoingJob {
  const fields = wireFields(spec);
  const job: OutgoingJob = { ...fields, id: fields.id === undefined || fields.id === '' ? uuidv7() : fields.id };
  const trace = job.meta?.['traceparent'] === undefined ? activeTraceMeta() : undefined;
  if (trace !== undefined) {
    const { tracestate: _replaced, ...meta } = job.meta ?? {};
    job.meta = { ...meta, ...trace };
  }
  return job;
}

function noop(): void {}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(noop); // a rejection is also thrown to the caller of enqueueAll
  return { promise, resolve, reject };
}
