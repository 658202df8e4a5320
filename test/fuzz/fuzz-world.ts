import type { DeepPartial, Job } from '../../gen/ojs/server/v1/job';
import type { FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { jobSpec } from '../support/jobs';
import type { StreamReader } from '../support/streams';
import type { Clients, TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';
import type { Draw } from './draw';

/** A job a world worker holds: what a settlement needs to meet a real lease. */
export interface HeldLease {
  workerId: string;
  jobId: string;
  leaseToken: string;
}

/** Most ids of each kind the world remembers (the latest). */
const MEMORY = 400;
const FETCHING_WORKERS = 3;

function remember<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > MEMORY) list.splice(0, list.length - MEMORY);
}

/**
 * What the fuzzer's requests meet besides unknown ids: jobs in every state
 * (available, pending, scheduled, held, timed out, retried, settled) and
 * workers that fetch, holding leases. Its workers never beat, so the
 * background passes (run at each refresh) declare them dead and recover
 * their jobs; fuzzed requests deregister, quiet and terminate them too. A
 * refresh replaces the workers whose Fetch stream ended and adds jobs.
 */
export class FuzzWorld {
  readonly queues = ['fz-a', 'fz-b', 'default'];
  readonly labels = ['fz', 'fz-canary'];
  readonly jobIds: string[] = [];
  readonly workerIds: string[] = [];
  readonly leases: HeldLease[] = [];
  private readonly fetching = new Map<string, StreamReader<FetchResponse>>();
  private registered = 0;

  constructor(
    private readonly server: TestServer,
    private readonly clients: Clients,
    private readonly draw: Draw,
  ) {}

  /** Adds jobs, replaces workers whose Fetch stream ended, and runs every background task once. */
  async refresh(): Promise<void> {
    const jobs = Array.from({ length: 12 }, () => this.jobShape());
    const pending = Array.from({ length: 3 }, () => this.jobShape());
    for (const job of (await this.clients.jobs.enqueue({ jobs: jobs.map(jobSpec) })).jobs) remember(this.jobIds, job.id);
    for (const job of (await this.clients.jobs.enqueue({ jobs: pending.map(jobSpec), pending: true })).jobs) remember(this.jobIds, job.id);
    while (this.fetching.size < FETCHING_WORKERS) await this.addWorker();
    await this.server.runMaintenance();
  }

  /** Closes the world's Fetch streams. */
  stop(): void {
    for (const fetch of this.fetching.values()) fetch.close();
    this.fetching.clear();
  }

  /** A job of the world: short timeouts and quick retries, so that the background passes find work. */
  private jobShape(): DeepPartial<Job> {
    const { draw } = this;
    return {
      queue: draw.pick(this.queues),
      type: draw.pick(['fz.echo', 'fz.slow']),
      args: [draw.int(0, 1_000)],
      priority: draw.int(-5, 5),
      timeout: draw.pick([0, 1, 2]),
      gracePeriod: draw.pick([0, 1]),
      retry: { maxAttempts: draw.int(1, 3), initialInterval: 'PT0.01S', jitter: false },
      scheduledAt: draw.chance(0.2) ? new Date(Date.now() + draw.int(0, 500)) : undefined,
    };
  }

  private async addWorker(): Promise<void> {
    this.registered += 1;
    const worker = await TestWorker.register(this.clients, {
      workerId: `fz-w${this.registered}-${this.draw.int(0, 1e6)}`,
      queues: this.queues,
      concurrency: this.draw.int(2, 20),
      labels: this.labels,
    });
    remember(this.workerIds, worker.workerId);
    const fetch = worker.openFetch();
    this.fetching.set(worker.workerId, fetch);
    void this.follow(worker.workerId, fetch);
  }

  /** Keeps the leases a worker receives, until its stream ends (deregistered, dead, quiet, terminated). */
  private async follow(workerId: string, fetch: StreamReader<FetchResponse>): Promise<void> {
    try {
      for (;;) {
        for (const delivery of (await fetch.next()).deliveries) {
          remember(this.leases, { workerId, jobId: delivery.job!.id, leaseToken: delivery.leaseToken });
        }
      }
    } catch {
      // The stream ended: a refresh replaces the worker.
    } finally {
      if (this.fetching.get(workerId) === fetch) this.fetching.delete(workerId);
    }
  }
}
