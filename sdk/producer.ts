import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Job, type DeepPartial } from '../gen/ojs/server/v1/job';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import { connect, type Connection, type ConnectionOptions } from './connection';
import { compose, type Middleware } from './middleware';
import { isSizeRefusal } from './refusals';

/** What a producer sets on a job: its type, and whatever else it needs. */
export type JobSpec = DeepPartial<Job> & { type: string };

/** Enqueue middleware: sees (and may change) every job before it is sent; resolves with the stored envelope. */
export type EnqueueMiddleware = Middleware<JobSpec, Job>;

/**
 * Most jobs in one Enqueue call: the server refuses more (INVALID_ARGUMENT).
 * An enqueueAll is atomic, so a larger one cannot be split.
 */
const MAX_ENQUEUE_BATCH = 1_000;

export interface ProducerOptions extends Partial<ConnectionOptions> {
  /** Most jobs in one coalesced Enqueue call, from 1 to 1,000. Default 500. */
  maxBatch?: number;
  /** How many times a call is tried again while the server is unreachable. Default 5. */
  retries?: number;
}

interface Waiting {
  spec: Job;
  resolve: (job: Job) => void;
  reject: (error: unknown) => void;
}

/**
 * Enqueues jobs. Jobs enqueued one by one in the same tick of the event loop
 * travel in one Enqueue call (a unary call costs the server far more than a
 * job in it), each caller still getting its own stored envelope or error.
 * Every job gets a client-side UUIDv7 id unless it has one, which makes a
 * retried call safe: a job the server already took is not stored twice.
 */
export class Producer {
  private readonly connection: Connection;
  private readonly middleware: EnqueueMiddleware[] = [];
  private waiting: Waiting[] = [];
  private isFlushScheduled = false;
  private readonly maxBatch: number;
  private readonly retries: number;

  constructor(options: ProducerOptions = {}) {
    this.maxBatch = options.maxBatch ?? 500;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1 || this.maxBatch > MAX_ENQUEUE_BATCH)
      throw new RangeError(`maxBatch must be a whole number from 1 to ${MAX_ENQUEUE_BATCH} (the server's limit), got ${this.maxBatch}`);
    this.retries = options.retries ?? 5;
    this.connection = connect({
      address: options.address ?? process.env['OJS_SERVER'] ?? '127.0.0.1:9090',
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
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
    if (this.middleware.length === 0) return this.send(specs.map(withId));
    const passed = new Map<number, Job>();
    const position = new Map<number, number>();
    const stored = deferred<Job[]>();
    const reached = specs.map(() => deferred<void>());
    const chains = specs.map((spec, i) =>
      compose(this.middleware, async (job: JobSpec) => {
        passed.set(i, withId(job));
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

  close(): void {
    this.connection.close();
  }

  private batched(spec: JobSpec): Promise<Job> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ spec: withId(spec), resolve, reject });
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
  private async send(jobs: Job[]): Promise<Job[]> {
    const backoff = new Backoff(100, 2_000);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.tryEnqueue(jobs, attempt > 0);
      } catch (error) {
        if (!hasStatus(error, Status.UNAVAILABLE) || attempt >= this.retries) throw error;
        await pause(backoff.next());
      }
    }
  }

  /**
   * One Enqueue call. A retry that finds the ids taken may follow a try
   * that was stored but whose answer was lost: Enqueue is all-or-none, so
   * then every id is there, and the stored jobs are the answer. When only
   * some are, they are another producer's jobs and the refusal stands.
   */
  private async tryEnqueue(jobs: Job[], isRetry: boolean): Promise<Job[]> {
    try {
      return (await this.connection.jobs.enqueue({ jobs, pending: false })).jobs;
    } catch (error) {
      if (!isRetry || !hasStatus(error, Status.ALREADY_EXISTS)) throw error;
      const stored = (await Promise.all(jobs.map((job) => this.storedJob(job.id)))).filter((job) => job !== undefined);
      if (stored.length < jobs.length) throw error;
      return stored;
    }
  }

  /** The job the server holds under `id`, or undefined if it holds none. */
  private async storedJob(id: string): Promise<Job | undefined> {
    try {
      return (await this.connection.jobs.getJob({ jobId: id })).job;
    } catch (error) {
      if (hasStatus(error, Status.NOT_FOUND)) return undefined;
      throw error;
    }
  }
}

function hasStatus(error: unknown, status: Status): boolean {
  return error instanceof ClientError && error.code === status;
}

/**
 * Whether jobs of a refused batch may pass on their own: the server refused
 * one job's content (INVALID_ARGUMENT), its id (ALREADY_EXISTS) or its size,
 * or the size of the whole call, but not a full store.
 */
function mayPassAlone(error: unknown): boolean {
  return hasStatus(error, Status.INVALID_ARGUMENT) || hasStatus(error, Status.ALREADY_EXISTS) || isSizeRefusal(error);
}

function withId(spec: JobSpec): Job {
  const job = Job.fromPartial(spec);
  if (job.id === '') job.id = uuidv7();
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
