import { assertField, invalidRequest, OjsError, workerNotFound, type FieldViolation } from '../domain/errors';
import { jobIdProblem, labelProblem, queueNameProblem, workerIdProblem } from '../domain/identifiers';
import {
  MAX_CONCURRENCY,
  afterDirective,
  afterReport,
  normalizeRegistration,
  workerSizeBound,
  type Worker,
  type WorkerRegistration,
  type WorkerState,
} from '../domain/worker';
import { DELIVERY_BUDGET_BYTES } from '../domain/limits';
import { MAX_PAGE_SIZE, pageWithinBytes, type Page, type PageRequest } from '../domain/paging';
import type { BeatOutcome, WorkerFilter, WorkerSnapshot, WorkerStateFields, WorkerTarget } from '../store/job-store';
import type { AppContext, ProtocolSettings } from './app-context';
import type { Recovery } from './recovery';

export interface BeatReport {
  workerId: string;
  state: WorkerState;
  sequence: number;
  activeJobIds: readonly string[];
}

/** Most workers one filtered listing call examines, so that no store call reads the whole fleet. */
const WORKER_SCAN_BUDGET = 10_000;

function hasFilter(filter: WorkerFilter): boolean {
  return filter.label !== undefined || filter.queue !== undefined;
}

/** How many times an operation retries after losing a race with a concurrent change. */
const RACE_RETRIES = 5;

function raceLost(what: string): OjsError {
  return new OjsError('unavailable', `${what} kept changing concurrently; try again`, { retryable: true });
}

function stateFields(worker: Worker): WorkerStateFields {
  return { state: worker.state, directive: worker.directive };
}

/**
 * Registration, heartbeats and operator directives (worker-protocol sections
 * 3, 4 and 10). State changes are read, decided by the domain, and applied
 * only if the worker did not change in between.
 */
export class WorkerRegistry {
  constructor(
    private readonly ctx: AppContext,
    private readonly recovery: Recovery,
  ) {}

  /**
   * Registers a worker. A live registration with the same id is refused; one
   * that has been silent past the heartbeat timeout is recovered first, as
   * the dead-worker pass would have done.
   */
  async register(input: WorkerRegistration): Promise<ProtocolSettings> {
    const violations: FieldViolation[] = [];
    const registration = normalizeRegistration(input, violations);
    if (violations.length > 0) {
      throw new OjsError('invalid_request', violations.map((v) => `${v.field}: ${v.description}`).join('; '), {
        fieldViolations: violations,
      });
    }
    const { ctx } = this;
    const now = ctx.clock.now();
    const worker: Worker = { ...registration, registeredAt: now, state: 'running', lastBeatAt: now, lastSequence: 0, reportedJobIds: [] };
    for (let attempt = 0; ; attempt++) {
      try {
        await ctx.store.registerWorker(worker);
        break;
      } catch (error) {
        if (!(error instanceof OjsError) || error.code !== 'duplicate' || attempt >= RACE_RETRIES) throw error;
        const previous = await ctx.store.getWorker(worker.workerId);
        // Gone since the refusal: register again. Silent past the timeout: recover it first.
        if (previous === undefined) continue;
        if (previous.worker.lastBeatAt >= now - ctx.settings.heartbeatTimeoutMs) throw error;
        await this.recovery.removeWorker(previous, 'dead');
      }
    }
    ctx.telemetry.workerTransition({ workerId: worker.workerId, from: 'none', to: 'running' });
    ctx.logger.info({ workerId: worker.workerId, queues: worker.queues, concurrency: worker.concurrency }, 'worker registered');
    return ctx.settings;
  }

  /** Removes the worker; jobs it still holds are failed as `shutdown` and requeued. */
  async deregister(workerId: string): Promise<string[]> {
    assertField('worker_id', workerIdProblem(workerId));
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      const released = await this.recovery.removeWorker(await this.get(workerId), 'deregistered');
      if (released !== undefined) return released;
    }
    throw raceLost(`worker ${workerId}`);
  }

  async beat(report: BeatReport): Promise<BeatOutcome> {
    assertField('worker_id', workerIdProblem(report.workerId));
    assertBeat(report);
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      const { worker } = await this.get(report.workerId);
      const next = afterReport(worker, report.state);
      const outcome = await this.ctx.store.recordBeat({
        workerId: report.workerId,
        sequence: report.sequence,
        activeJobIds: report.activeJobIds,
        now: this.ctx.clock.now(),
        expected: stateFields(worker),
        next,
      });
      if (outcome.result === 'conflict') continue;
      if (outcome.result === 'applied' && next.state !== worker.state) {
        this.ctx.telemetry.workerTransition({ workerId: report.workerId, from: worker.state, to: next.state });
      }
      return outcome;
    }
    throw raceLost(`worker ${report.workerId}`);
  }

  /**
   * Directs workers to a state; returns the ids directed. A worker named by
   * id that cannot take the directive is an error; one matched by label or
   * queue is skipped.
   */
  async direct(target: WorkerTarget, state: WorkerState): Promise<string[]> {
    assertTarget(target);
    const candidates = 'workerId' in target ? [await this.get(target.workerId)] : this.matching(target);
    const directed: string[] = [];
    for await (const { worker } of candidates) {
      try {
        await this.directOne(worker.workerId, state);
        directed.push(worker.workerId);
      } catch (error) {
        if ('workerId' in target || !(error instanceof OjsError) || error.code !== 'invalid_state') throw error;
      }
    }
    this.ctx.logger.info({ target, state, workerIds: directed }, 'workers directed');
    return directed;
  }

  async get(workerId: string): Promise<WorkerSnapshot> {
    assertField('worker_id', workerIdProblem(workerId));
    const snapshot = await this.ctx.store.getWorker(workerId);
    if (snapshot === undefined) throw workerNotFound(workerId);
    return snapshot;
  }

  /** One page of the registered workers, filtered by label or queue. */
  async list(filter: WorkerFilter, page: PageRequest): Promise<Page<WorkerSnapshot>> {
    assertTarget(filter);
    const found = await this.ctx.store.listWorkers({ ...page, ...(hasFilter(filter) ? { filter } : {}), scanBudget: WORKER_SCAN_BUDGET });
    return pageWithinBytes(
      found,
      DELIVERY_BUDGET_BYTES,
      ({ worker, heldJobIds }) => workerSizeBound(worker, heldJobIds.length),
      ({ worker }) => worker.workerId,
    );
  }

  /** Every worker the filter matches, read page by page so that no store call reads them all. */
  private async *matching(filter: WorkerFilter): AsyncGenerator<WorkerSnapshot> {
    let after: string | undefined;
    do {
      const page = await this.list(filter, after === undefined ? { limit: MAX_PAGE_SIZE } : { after, limit: MAX_PAGE_SIZE });
      yield* page.items;
      after = page.nextAfter;
    } while (after !== undefined);
  }

  private async directOne(workerId: string, state: WorkerState): Promise<void> {
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      const { worker } = await this.get(workerId);
      const next = afterDirective(worker, state);
      if ((await this.ctx.store.directWorker({ workerId, expected: stateFields(worker), next })) === 'applied') return;
    }
    throw raceLost(`worker ${workerId}`);
  }
}

/** A beat lists at most as many jobs as a worker may hold, each a job id; its sequence is a safe integer. */
function assertBeat(report: BeatReport): void {
  if (!Number.isSafeInteger(report.sequence) || report.sequence < 0) throw invalidRequest('sequence', 'must be a non-negative integer');
  if (report.activeJobIds.length > MAX_CONCURRENCY) throw invalidRequest('active_job_ids', `must list at most ${MAX_CONCURRENCY} jobs`);
  report.activeJobIds.forEach((jobId, i) => assertField(`active_job_ids[${i}]`, jobIdProblem(jobId)));
}

/** The worker id, label or queue that selects workers. */
function assertTarget(target: WorkerTarget | WorkerFilter): void {
  if ('workerId' in target) assertField('worker_id', workerIdProblem(target.workerId));
  if ('label' in target && target.label !== undefined) assertField('label', labelProblem(target.label));
  if ('queue' in target && target.queue !== undefined) assertField('queue', queueNameProblem(target.queue));
}
