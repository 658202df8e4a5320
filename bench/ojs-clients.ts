import { createChannel, createClientFactory, type Channel } from 'nice-grpc';
import { JobServiceDefinition } from '../gen/ojs/server/v1/job_service';
import { WorkerServiceDefinition, WorkerState, type Completion, type Delivery } from '../gen/ojs/server/v1/worker_service';
import { AsyncQueue } from '../src/transport/grpc/async-queue';
import type { BeatRequest } from '../gen/ojs/server/v1/worker_service';
import type { Job } from '../gen/ojs/server/v1/job';

const factory = createClientFactory();

export function connect(address: string) {
  const channel: Channel = createChannel(address);
  return {
    channel,
    workers: factory.create(WorkerServiceDefinition, channel),
    jobs: factory.create(JobServiceDefinition, channel),
  };
}

export type Connection = ReturnType<typeof connect>;

/** The smallest envelope a producer sends. */
export function noopJob(queue: string, n: number): Partial<Job> {
  return { type: 'bench.noop', queue, args: [n] };
}

/**
 * A benchmark worker written the way a fast worker should be: one Fetch
 * stream, handlers that finish at once, and acks coalesced into AckBatch
 * calls (flushed after `coalesceMs` or when `maxBatch` completions wait).
 */
export class BenchWorker {
  private pending: Completion[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private readonly beats = new AsyncQueue<BeatRequest>();

  constructor(
    private readonly connection: Connection,
    readonly workerId: string,
    private readonly onDelivery: (deliveries: Delivery[]) => void,
    private readonly options = { coalesceMs: 1, maxBatch: 200 },
  ) {}

  async start(queues: string[], concurrency: number): Promise<void> {
    await this.connection.workers.register({ workerId: this.workerId, hostname: 'bench', pid: process.pid, queues, concurrency, labels: ['bench'] });
    void this.consume(this.connection.workers.beat(this.beats, { signal: this.abort.signal }));
    this.beats.push({ workerId: this.workerId, state: WorkerState.WORKER_STATE_RUNNING, activeJobs: 0, activeJobIds: [], sequence: 1 });
    void this.fetchLoop();
  }

  complete(delivery: Delivery): void {
    this.pending.push({ jobId: delivery.job!.id, leaseToken: delivery.leaseToken, result: undefined });
    if (this.pending.length >= this.options.maxBatch) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), this.options.coalesceMs);
  }

  async stop(): Promise<void> {
    this.flush();
    this.abort.abort();
    this.beats.end();
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return;
    const completions = this.pending;
    this.pending = [];
    this.connection.workers.ackBatch({ workerId: this.workerId, completions }).catch((error: unknown) => {
      if (!this.abort.signal.aborted) console.error('ackBatch failed', error);
    });
  }

  private async fetchLoop(): Promise<void> {
    try {
      for await (const response of this.connection.workers.fetch({ workerId: this.workerId, queues: [] }, { signal: this.abort.signal })) {
        if (response.deliveries.length > 0) this.onDelivery(response.deliveries);
      }
    } catch (error) {
      if (!this.abort.signal.aborted) throw error;
    }
  }

  private async consume(stream: AsyncIterable<unknown>): Promise<void> {
    try {
      for await (const _ of stream);
    } catch {
      // The beat stream ends when the benchmark aborts it.
    }
  }
}
