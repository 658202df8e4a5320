import { ANONYMOUS } from '../../../src/domain/principal';
import type { ProtocolSettings } from '../../../src/app/app-context';
import { createApplication, type Application } from '../../../src/app/application';
import type { FetchSession } from '../../../src/app/fetch-session';
import type { BeatListener } from '../../../src/app/worker-streams';
import type { Job } from '../../../src/domain/job';
import type { JobSubmission } from '../../../src/domain/job-submission';
import { DEFAULT_PAYLOAD_LIMITS } from '../../../src/domain/limits';
import { DEFAULT_RETENTION } from '../../../src/domain/retention';
import type { WorkerRegistration, WorkerState } from '../../../src/domain/worker';
import type { BeatOutcome } from '../../../src/store/job-store';
import { MemoryJobStore } from '../../../src/store/memory/memory-job-store';
import { fixedJitterEntropy } from '../../support/fixed-entropy';
import { ManualClock } from '../../support/manual-clock';
import { RecordingTelemetry } from '../../support/recording-telemetry';
import { RecordingLogger } from '../../support/silent-logger';
import { TEST_PROTOCOL } from '../../support/test-protocol';
import { eventsOf } from '../../../src/domain/event-catalog';
import { pulledDeliveries } from './pulled-deliveries';

const TIMEOUT_EVENT_TYPES: ReadonlySet<string> = new Set(['job.timeout', 'job.stalled', 'job.ttl_expired', 'job.total_timeout']);

/** The protocol timings the harness runs with. */
export const SETTINGS = TEST_PROTOCOL;

/**
 * The application over a memory store, a manual clock, fixed jitter, and
 * recording telemetry and logger: no server, no network. Arranging goes
 * through the app's public use cases, as a transport would call them.
 */
export class AppHarness {
  readonly clock = new ManualClock();
  readonly store = new MemoryJobStore();
  readonly telemetry = new RecordingTelemetry();
  readonly logger = new RecordingLogger();
  readonly app: Application;
  private readonly sequences = new Map<string, number>();

  constructor(settings: Partial<ProtocolSettings> = {}) {
    this.app = createApplication({
      store: this.store,
      clock: this.clock,
      settings: { ...SETTINGS, ...settings },
      limits: DEFAULT_PAYLOAD_LIMITS,
      service: 'test',
      retention: DEFAULT_RETENTION,
      entropy: fixedJitterEntropy,
      telemetry: this.telemetry,
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    this.app.streams.stop();
    await this.store.close();
  }

  /** Enqueues one job of type `test.job` on `default`, with whatever the test overrides. */
  async enqueue(submission: Partial<JobSubmission> = {}, options: { pending?: boolean } = {}, caller = ANONYMOUS): Promise<Job> {
    const [outcome] = await this.app.jobs.enqueue(caller, [{ type: 'test.job', args: [], ...submission }], {
      pending: options.pending ?? false,
    });
    return outcome!.job;
  }

  /** Registers a worker consuming `default`, with whatever the test overrides, owned by `caller`. */
  async register(workerId: string, overrides: Partial<WorkerRegistration> = {}, caller = ANONYMOUS): Promise<void> {
    await this.app.workers.register(caller, {
      workerId,
      hostname: 'test-host',
      pid: 1,
      queues: ['default'],
      concurrency: 10,
      labels: [],
      ...overrides,
    });
  }

  /** Opens a Fetch stream of the worker on all its queues, with no wait limit. */
  openFetch(workerId: string, caller = ANONYMOUS): Promise<FetchSession> {
    return this.app.streams.openFetch(caller, workerId, [], 0);
  }

  /**
   * The first batch a new Fetch stream of the worker delivers, after which
   * the stream closes (the batch counts as delivered). A batch is never
   * empty: call it with jobs available to the worker.
   */
  async claim(workerId: string, caller = ANONYMOUS): Promise<Job[]> {
    const session = await this.openFetch(workerId, caller);
    const deliveries = pulledDeliveries(this.app.streams, session);
    try {
      const first = await deliveries.next();
      return first.done === true ? [] : first.value;
    } finally {
      await deliveries.return(undefined);
    }
  }

  /** Claims for the worker and expects exactly one job. */
  /** The timeout events (timeouts.md 11.1) the store's log holds, as a watcher would get them: type, job id and data. */
  async timeoutEvents(): Promise<{ type: string; jobId?: string; data: Record<string, unknown> }[]> {
    const { facts } = await this.store.readFacts({ limit: 1_000 });
    return facts
      .flatMap((fact) => eventsOf(fact, 'test'))
      .filter((event) => TIMEOUT_EVENT_TYPES.has(event.type))
      .map(({ type, jobId, data }) => ({ type, ...(jobId === undefined ? {} : { jobId }), data }));
  }

  async claimOne(workerId: string, caller = ANONYMOUS): Promise<Job> {
    const jobs = await this.claim(workerId, caller);
    if (jobs.length !== 1) throw new Error(`expected one job for ${workerId}, got ${jobs.length}`);
    return jobs[0]!;
  }

  /** A beat of the worker with the next sequence number; listing a held job confirms and renews its lease. */
  beat(workerId: string, activeJobIds: string[] = [], state: WorkerState = 'running'): Promise<BeatOutcome> {
    const sequence = (this.sequences.get(workerId) ?? 0) + 1;
    this.sequences.set(workerId, sequence);
    return this.app.workers.beat(ANONYMOUS, { workerId, state, sequence, activeJobIds });
  }

  job(jobId: string): Promise<Job> {
    return this.app.jobs.get(ANONYMOUS, jobId);
  }

  /** Subscribes a recording listener to the pushes for the worker's Beat stream. */
  listen(workerId: string): RecordingBeatListener {
    const listener = new RecordingBeatListener();
    this.app.streams.attachBeat(workerId, listener);
    return listener;
  }
}

/** What a Beat stream was told between beats. */
export class RecordingBeatListener implements BeatListener {
  readonly directives: WorkerState[] = [];
  readonly cancelledJobIds: string[] = [];
  readonly timedOutJobIds: string[] = [];
  readonly reclaimedJobIds: string[] = [];
  isRemoved = false;

  directed(state: WorkerState): void {
    this.directives.push(state);
  }
  cancelled(jobIds: string[]): void {
    this.cancelledJobIds.push(...jobIds);
  }
  timedOut(jobIds: string[]): void {
    this.timedOutJobIds.push(...jobIds);
  }
  reclaimed(jobIds: string[]): void {
    this.reclaimedJobIds.push(...jobIds);
  }
  removed(): void {
    this.isRemoved = true;
  }
}
