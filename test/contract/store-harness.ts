import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../../lib/sha256';
import { uuidv7 } from 'uuidv7';
import { decideFailure, type FailureOutcome } from '../../src/domain/failure';
import type { Job } from '../../src/domain/job';
import { DEFAULT_PAYLOAD_LIMITS, DELIVERY_BUDGET_BYTES } from '../../src/domain/limits';
import { appendError, stampError, type FailureReport } from '../../src/domain/job-error';
import { waitingExpiryReport } from '../../src/domain/timeouts';
import { buildJob, type JobSubmission, type SubmissionProblems } from '../../src/domain/job-submission';
import { afterDirective, afterReport, type Worker, type WorkerRegistration, type WorkerState } from '../../src/domain/worker';
import { beatOutcomeOf } from '../../src/store/beat-batch';
import type { BeatOutcome, BeatParams, JobStore } from '../../src/store/job-store';
import type { StoreSignal } from '../../src/store/store-signal';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const VISIBILITY_MS = 60_000;

/** A store under test, plus the helpers the contract tests share. */
export class StoreHarness {
  readonly signals: StoreSignal[] = [];
  private readonly waiters: { predicate: (s: StoreSignal) => boolean; resolve: (s: StoreSignal) => void }[] = [];
  private readonly unsubscribe: () => void;

  constructor(readonly store: JobStore) {
    this.unsubscribe = store.subscribe((signal) => {
      this.signals.push(signal);
      // A copy: satisfied waiters are spliced out as we go.
      for (const waiter of Array.from(this.waiters)) {
        if (!waiter.predicate(signal)) continue;
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(signal);
      }
    });
  }

  /**
   * Resolves with the first signal (already received, or still to come) that
   * matches. A shared store delivers signals asynchronously, so tests wait
   * for them instead of expecting them synchronously.
   */
  waitForSignal<K extends StoreSignal['kind']>(
    kind: K,
    predicate: (signal: Extract<StoreSignal, { kind: K }>) => boolean = () => true,
  ): Promise<Extract<StoreSignal, { kind: K }>> {
    const matches = (s: StoreSignal): boolean => s.kind === kind && predicate(s as Extract<StoreSignal, { kind: K }>);
    const seen = this.signals.find(matches);
    if (seen !== undefined) return Promise.resolve(seen as Extract<StoreSignal, { kind: K }>);
    return new Promise((resolve) => {
      this.waiters.push({ predicate: matches, resolve: resolve as (s: StoreSignal) => void });
    });
  }

  /** A valid job, built by the domain as the application would. */
  job(submission: Partial<JobSubmission> = {}, options: { now?: number; pending?: boolean } = {}): Job {
    const problems: SubmissionProblems = { violations: [], oversized: [], answerBytes: 0 };
    const job = buildJob(
      { type: 'contract.job', args: [], ...submission },
      {
        now: options.now ?? T0,
        newId: () => uuidv7(),
        digest: sha256Hex,
        defaults: { timeoutMs: 60_000, visibilityTimeoutMs: VISIBILITY_MS, gracePeriodMs: 30_000, heartbeatTimeoutMs: 60_000 },
        limits: DEFAULT_PAYLOAD_LIMITS,
        pending: options.pending ?? false,
      },
      'job',
      problems,
    );
    if (problems.violations.length + problems.oversized.length > 0) throw new Error(JSON.stringify(problems));
    return job;
  }

  async enqueue(...submissions: Partial<JobSubmission>[]): Promise<Job[]> {
    const jobs = submissions.map((s) => this.job(s));
    await this.store.enqueue(jobs);
    return jobs;
  }

  /** Registers a worker (owned by ANONYMOUS, '', unless the test names an owner). */
  async register(registration: Partial<WorkerRegistration & Pick<Worker, 'owner'>> = {}, now = T0): Promise<Worker> {
    const worker: Worker = {
      workerId: `w-${randomUUID()}`,
      hostname: 'host',
      pid: 1,
      queues: ['default'],
      concurrency: 10,
      labels: [],
      owner: '',
      ...registration,
      registeredAt: now,
      state: 'running',
      lastBeatAt: now,
      lastSequence: 0,
      reportedJobIds: [],
    };
    await this.store.registerWorker(worker);
    return worker;
  }

  /** Claims with a confirmation window longer than the visibility timeout unless one is given. */
  claim(workerId: string, queues: string[], max = 100, now = T0, confirmWithinMs = 10 * VISIBILITY_MS) {
    return this.store.claim({ workerId, queues, max, now, leaseNonce: randomUUID(), confirmWithinMs, maxBytes: DELIVERY_BUDGET_BYTES });
  }

  /** The outcome the domain would decide for a failure of the job's current attempt. */
  outcome(job: Job, report: FailureReport, now: number, requeueAtOnce = false): FailureOutcome {
    return decideFailure(job, report, { now, random: () => 0.5, requeueAtOnce });
  }

  /** Discards the waiting jobs past their deadline as the application does: find, decide, apply. */
  async expireWaiting(now: number) {
    const found = await this.store.findExpiredWaiting(now, 100);
    const items = found.map((job) => {
      const error = stampError(waitingExpiryReport(job, now), job.attempt, now);
      return { jobId: job.id, expectedState: job.state, error, errors: appendError(job.errors, error) };
    });
    return this.store.discardWaiting({ items, now });
  }

  /** A beat decided as the application decides it: read, afterReport, apply. */
  async beat(workerId: string, state: WorkerState, activeJobIds: string[], sequence: number, now: number) {
    const { worker } = (await this.store.getWorker(workerId))!;
    const next = afterReport(worker, state);
    return this.recordBeat({
      workerId,
      sequence,
      activeJobIds,
      now,
      expected: { state: worker.state, directive: worker.directive },
      next,
    });
  }

  /** One beat, recorded as the application records it: in a batch, an unregistered worker NOT_FOUND. */
  async recordBeat(params: BeatParams): Promise<BeatOutcome> {
    return beatOutcomeOf((await this.store.recordBeats([params]))[0]!, params.workerId);
  }

  /** A directive decided as the application decides it (throws what afterDirective throws). */
  async direct(workerId: string, state: WorkerState) {
    const { worker } = (await this.store.getWorker(workerId))!;
    const next = afterDirective(worker, state);
    return this.store.directWorker({ workerId, expected: { state: worker.state, directive: worker.directive }, next });
  }

  async state(jobId: string): Promise<string | undefined> {
    return (await this.store.getJob(jobId))?.state;
  }

  signalsOf<K extends StoreSignal['kind']>(kind: K): Extract<StoreSignal, { kind: K }>[] {
    return this.signals.filter((s): s is Extract<StoreSignal, { kind: K }> => s.kind === kind);
  }

  close(): void {
    this.unsubscribe();
  }
}
