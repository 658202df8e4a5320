import { OjsError, workerNotFound, type FieldViolation } from '../domain/errors';
import {
  afterDirective,
  afterReport,
  normalizeRegistration,
  type Worker,
  type WorkerRegistration,
  type WorkerState,
} from '../domain/worker';
import { MAX_PAGE_SIZE, type Page, type PageRequest } from '../domain/paging';
import type { BeatOutcome, WorkerFilter, WorkerSnapshot, WorkerStateFields, WorkerTarget } from '../store/job-store';
import type { AppContext, ProtocolSettings } from './app-context';
import type { Recovery } from './recovery';
import { requireField } from './require-field';

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
        const previous = error instanceof OjsError && error.code === 'duplicate' ? await ctx.store.getWorker(worker.workerId) : undefined;
        const isSilent = previous !== undefined && previous.worker.lastBeatAt < now - ctx.settings.heartbeatTimeoutMs;
        if (!isSilent || attempt >= RACE_RETRIES) throw error;
        await this.recovery.removeWorker(previous, 'dead');
      }
    }
    ctx.telemetry.workerTransition({ workerId: worker.workerId, from: 'none', to: 'running' });
    ctx.logger.info({ workerId: worker.workerId, queues: worker.queues, concurrency: worker.concurrency }, 'worker registered');
    return ctx.settings;
  }

  /** Removes the worker; jobs it still holds are failed as `shutdown` and requeued. */
  async deregister(workerId: string): Promise<string[]> {
    requireField('worker_id', workerId);
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      const snapshot = await this.get(workerId);
      if (await this.recovery.removeWorker(snapshot, 'deregistered')) return snapshot.heldJobIds;
    }
    throw raceLost(`worker ${workerId}`);
  }

  async beat(report: BeatReport): Promise<BeatOutcome> {
    requireField('worker_id', report.workerId);
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
    const snapshot = await this.ctx.store.getWorker(requireField('worker_id', workerId));
    if (snapshot === undefined) throw workerNotFound(workerId);
    return snapshot;
  }

  /** One page of the registered workers, filtered by label or queue. */
  async list(filter: WorkerFilter, page: PageRequest): Promise<Page<WorkerSnapshot>> {
    return this.ctx.store.listWorkers({ ...page, ...(hasFilter(filter) ? { filter } : {}), scanBudget: WORKER_SCAN_BUDGET });
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
