import { assertField, invalidRequest, OjsError, workerNotFound, type FieldViolation } from '../domain/errors';
import { mayUseQueue, type Principal } from '../domain/principal';
import { jobIdProblem, labelProblem, queueNameProblem, workerIdProblem } from '../domain/identifiers';
import {
  MAX_CONCURRENCY,
  afterDirective,
  afterReport,
  isOwnedBy,
  normalizeRegistration,
  workerSizeBound,
  type Worker,
  type WorkerRegistration,
  type WorkerState,
} from '../domain/worker';
import { DELIVERY_BUDGET_BYTES } from '../domain/limits';
import { MAX_PAGE_SIZE, pageWithinBytes, type Page, type PageRequest } from '../domain/paging';
import type { BeatOutcome, WorkerFilter, WorkerSnapshot, WorkerStateFields, WorkerTarget } from '../store/job-store';
import { beatOutcomeOf } from '../store/beat-batch';
import type { AppContext, ProtocolSettings } from './app-context';
import { BeatBatcher } from './beat-batcher';
import { assertMayUseQueue } from './caller-scope';
import type { Recovery } from './recovery';
import type { WorkerOwners } from './worker-owners';

export interface BeatReport {
  workerId: string;
  state: WorkerState;
  sequence: number;
  activeJobIds: readonly string[];
}

/**
 * What a Beat stream remembers of its worker between beats: the state
 * fields its last applied beat left, or nothing when they are not known.
 */
export interface BeatMemory {
  fields?: WorkerStateFields;
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
 * `expected` when `next` changes nothing, else `next`: what a Beat stream
 * remembers lives until the next beat, 5 s later, and a new object per beat
 * would outlive the young generation, to be collected with the whole heap.
 */
function sameOrNext(expected: WorkerStateFields, next: WorkerStateFields): WorkerStateFields {
  return next.state === expected.state && next.directive === expected.directive ? expected : next;
}

/** Whether a queue-scoped caller may see and steer the worker: every queue it serves must be the caller's. */
function isInScope(caller: Principal, worker: Worker): boolean {
  return worker.queues.every((queue) => mayUseQueue(caller, queue));
}

/**
 * Registration, heartbeats and operator directives (worker-protocol sections
 * 3, 4 and 10). State changes are read, decided by the domain, and applied
 * only if the worker did not change in between.
 *
 * A worker belongs to the principal that registered it: its Beat and
 * Deregister from anyone else answer NOT_FOUND, exactly as for an unknown
 * id. Operators are not owners: an unscoped operator steers and lists every
 * worker, a queue-scoped one only the workers of its queues.
 */
export class WorkerRegistry {
  /** The beats of one turn of the event loop, recorded in one store call. */
  private readonly beats: BeatBatcher;

  constructor(
    private readonly ctx: AppContext,
    private readonly recovery: Recovery,
    private readonly owners: WorkerOwners,
  ) {
    this.beats = new BeatBatcher(ctx.store);
  }

  /**
   * Registers a worker owned by the caller, for queues the caller may use. A
   * live registration with the same id is refused; one that has been silent
   * past the heartbeat timeout is recovered first, as the dead-worker pass
   * would have done, unless another principal registered it (that one is
   * left to the dead-worker pass). A stranger's clash gets the same
   * ALREADY_EXISTS as the owner's: ids are chosen by clients, so that a
   * taken id is taken cannot be hidden, but nothing more is told.
   */
  async register(caller: Principal, input: WorkerRegistration): Promise<ProtocolSettings> {
    const violations: FieldViolation[] = [];
    const registration = normalizeRegistration(input, violations);
    if (violations.length > 0) {
      throw new OjsError('invalid_request', violations.map((v) => `${v.field}: ${v.description}`).join('; '), {
        fieldViolations: violations,
      });
    }
    registration.queues.forEach((queue, i) => assertMayUseQueue(caller, `queues[${i}]`, queue));
    const { ctx } = this;
    const now = ctx.clock.now();
    const worker: Worker = {
      ...registration,
      owner: caller.name,
      registeredAt: now,
      state: 'running',
      lastBeatAt: now,
      lastSequence: 0,
      reportedJobIds: [],
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await ctx.store.registerWorker(worker);
        break;
      } catch (error) {
        if (!(error instanceof OjsError) || error.code !== 'duplicate' || attempt >= RACE_RETRIES) throw error;
        const previous = await ctx.store.getWorker(worker.workerId);
        // Gone since the refusal: register again. Silent past the timeout: recover it first.
        if (previous === undefined) continue;
        if (!isOwnedBy(previous.worker, caller) || previous.worker.lastBeatAt >= now - ctx.settings.heartbeatTimeoutMs) throw error;
        await this.recovery.removeWorker(previous, 'dead');
      }
    }
    this.owners.remember(worker);
    ctx.telemetry.workerTransition({ workerId: worker.workerId, from: 'none', to: 'running' });
    ctx.logger.info({ workerId: worker.workerId, queues: worker.queues, concurrency: worker.concurrency }, 'worker registered');
    return ctx.settings;
  }

  /** Removes the caller's worker; jobs it still holds are failed as `shutdown` and requeued. */
  async deregister(caller: Principal, workerId: string): Promise<string[]> {
    assertField('worker_id', workerIdProblem(workerId));
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      const released = await this.recovery.removeWorker(await this.owned(caller, workerId), 'deregistered');
      if (released !== undefined) return released;
    }
    throw raceLost(`worker ${workerId}`);
  }

  /** The caller's worker as its Beat stream starts (another's is NOT_FOUND): what the stream remembers of it. */
  async startBeats(caller: Principal, workerId: string): Promise<BeatMemory> {
    return { fields: stateFields((await this.owned(caller, workerId)).worker) };
  }

  /**
   * Records a beat of the caller's worker. `memory` is what its Beat stream
   * knows of the worker's state from its previous beat: the decision is made
   * from it without reading the worker again (a replica with thousands of
   * workers would otherwise pay a store round trip per beat for nothing),
   * and the store applies the beat only if the state is still that one (a
   * directive from any replica, or another stream, changed it): then the
   * worker is read and the decision made again. Beats of many workers that
   * arrive together reach the store in one call (BeatBatcher). Ownership is
   * checked against the owners this replica remembers, which forget every
   * removed worker.
   */
  async beat(caller: Principal, report: BeatReport, memory: BeatMemory = {}): Promise<BeatOutcome> {
    assertField('worker_id', workerIdProblem(report.workerId));
    assertBeat(report);
    for (let attempt = 0; attempt <= RACE_RETRIES; attempt++) {
      let expected = memory.fields;
      if (expected === undefined) expected = stateFields((await this.owned(caller, report.workerId)).worker);
      else await this.owners.assertOwner(caller, report.workerId);
      const next = afterReport(expected, report.state);
      const recorded = await this.beats.record({
        workerId: report.workerId,
        sequence: report.sequence,
        activeJobIds: report.activeJobIds,
        now: this.ctx.clock.now(),
        expected,
        next,
      });
      const outcome = beatOutcomeOf(recorded, report.workerId);
      // Applied: the worker is now `next`. Stale or conflict: what it is now is not known here.
      memory.fields = outcome.result === 'applied' ? sameOrNext(expected, next) : undefined;
      if (outcome.result === 'conflict') continue;
      if (outcome.result === 'applied' && next.state !== expected.state) {
        this.ctx.telemetry.workerTransition({ workerId: report.workerId, from: expected.state, to: next.state });
      }
      return outcome;
    }
    throw raceLost(`worker ${report.workerId}`);
  }

  /**
   * Directs workers to a state; returns the ids directed. A worker named by
   * id that cannot take the directive is an error; one matched by label or
   * queue is skipped. A queue-scoped operator reaches only the workers of
   * its queues: another named by id is NOT_FOUND to it.
   */
  async direct(caller: Principal, target: WorkerTarget, state: WorkerState): Promise<string[]> {
    assertTarget(caller, target);
    const candidates = 'workerId' in target ? [await this.visible(caller, target.workerId)] : this.matching(caller, target);
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

  /** The caller's own worker; another's is NOT_FOUND, as an unknown id is. */
  async owned(caller: Principal, workerId: string): Promise<WorkerSnapshot> {
    const snapshot = await this.get(workerId);
    if (!isOwnedBy(snapshot.worker, caller)) throw workerNotFound(workerId);
    this.owners.remember(snapshot.worker);
    return snapshot;
  }

  /**
   * One page of the registered workers the caller may see, filtered by label
   * or queue. For a queue-scoped caller the page leaves out the workers of
   * other queues, so it may hold fewer than asked while more follow.
   */
  async list(caller: Principal, filter: WorkerFilter, page: PageRequest): Promise<Page<WorkerSnapshot>> {
    assertTarget(caller, filter);
    const found = await this.ctx.store.listWorkers({ ...page, ...(hasFilter(filter) ? { filter } : {}), scanBudget: WORKER_SCAN_BUDGET });
    const visible = { ...found, items: found.items.filter(({ worker }) => isInScope(caller, worker)) };
    return pageWithinBytes(
      visible,
      DELIVERY_BUDGET_BYTES,
      ({ worker, heldJobIds }) => workerSizeBound(worker, heldJobIds.length),
      ({ worker }) => worker.workerId,
    );
  }

  /** A worker the caller may see (see isInScope); any other is NOT_FOUND. */
  private async visible(caller: Principal, workerId: string): Promise<WorkerSnapshot> {
    const snapshot = await this.get(workerId);
    if (!isInScope(caller, snapshot.worker)) throw workerNotFound(workerId);
    return snapshot;
  }

  /** Every worker the filter matches that the caller may see, read page by page so that no store call reads them all. */
  private async *matching(caller: Principal, filter: WorkerFilter): AsyncGenerator<WorkerSnapshot> {
    let after: string | undefined;
    do {
      const page = await this.list(caller, filter, after === undefined ? { limit: MAX_PAGE_SIZE } : { after, limit: MAX_PAGE_SIZE });
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

/** The worker id, label or queue that selects workers; a queue must be one the caller may use. */
function assertTarget(caller: Principal, target: WorkerTarget | WorkerFilter): void {
  if ('workerId' in target) assertField('worker_id', workerIdProblem(target.workerId));
  if ('label' in target && target.label !== undefined) assertField('label', labelProblem(target.label));
  if ('queue' in target && target.queue !== undefined) {
    assertField('queue', queueNameProblem(target.queue));
    assertMayUseQueue(caller, 'queue', target.queue);
  }
}
