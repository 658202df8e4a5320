import { ClientError, Status } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Job, type DeepPartial } from '../gen/ojs/server/v1/job';
import { pause } from '../lib/pause';
import { Backoff } from './backoff';
import { connect, type Connection, type ConnectionOptions } from './connection';
import { compose, type Middleware } from './middleware';

/** What a producer sets on a job: its type, and whatever else it needs. */
export type JobSpec = DeepPartial<Job> & { type: string };

/** Enqueue middleware: sees (and may change) every job before it is sent; resolves with the stored envelope. */
export type EnqueueMiddleware = Middleware<JobSpec, Job>;

export interface ProducerOptions extends Partial<ConnectionOptions> {
  /** Most jobs in one Enqueue call. Default 500. */
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
    this.connection = connect({
      address: options.address ?? process.env['OJS_SERVER'] ?? '127.0.0.1:9090',
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    this.maxBatch = options.maxBatch ?? 500;
    this.retries = options.retries ?? 5;
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
   * left out of the call.
   */
  async enqueueAll(specs: readonly JobSpec[]): Promise<Job[]> {
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
   * refuses the batch for one bad job, each job is sent on its own and only
   * the bad one fails.
   */
  private async sendBatch(batch: Waiting[]): Promise<void> {
    try {
      const stored = await this.send(batch.map((w) => w.spec));
      batch.forEach((w, i) => w.resolve(stored[i]!));
    } catch (error) {
      const isRefusal = error instanceof ClientError && (error.code === Status.INVALID_ARGUMENT || error.code === Status.ALREADY_EXISTS);
      if (!isRefusal || batch.length === 1) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(batch.map((w) => this.sendBatch([w])));
    }
  }

  /** Sends, retrying while the server is unreachable; a job that turns out to be stored already is read back. */
  private async send(jobs: Job[]): Promise<Job[]> {
    const backoff = new Backoff(100, 2_000);
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.connection.jobs.enqueue({ jobs, pending: false })).jobs;
      } catch (error) {
        if (attempt > 0 && error instanceof ClientError && error.code === Status.ALREADY_EXISTS && jobs.length === 1) {
          // An earlier try was stored before its answer was lost.
          const job = (await this.connection.jobs.getJob({ jobId: jobs[0]!.id })).job;
          if (job !== undefined) return [job];
        }
        if (!(error instanceof ClientError && error.code === Status.UNAVAILABLE) || attempt >= this.retries) throw error;
        await pause(backoff.next());
      }
    }
  }
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
