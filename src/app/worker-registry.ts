import { OjsError, workerNotFound, type FieldViolation } from '../domain/errors';
import {
  normalizeRegistration,
  type Worker,
  type WorkerRegistration,
  type WorkerState,
} from '../domain/worker';
import type { BeatOutcome, WorkerSnapshot, WorkerTarget } from '../store/job-store';
import { requireField } from './require-field';
import type { AppContext, ProtocolSettings } from './app-context';
import type { Recovery } from './recovery';

export interface BeatReport {
  workerId: string;
  state: WorkerState;
  sequence: number;
  activeJobIds: readonly string[];
}

/** How many times an operation retries after losing a race with a concurrent change. */
const RACE_RETRIES = 3;

/** Registration, heartbeats and operator directives (worker-protocol sections 3, 4 and 10). */
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
      const snapshot = await this.ctx.store.getWorker(workerId);
      if (snapshot === undefined) throw workerNotFound(workerId);
      if (await this.recovery.removeWorker(snapshot, 'deregistered')) return snapshot.heldJobs.map((job) => job.id);
    }
    throw new OjsError('invalid_state', `worker ${workerId} kept changing while deregistering; try again`, { retryable: true });
  }

  async beat(report: BeatReport): Promise<BeatOutcome> {
    requireField('worker_id', report.workerId);
    const outcome = await this.ctx.store.recordBeat({ ...report, now: this.ctx.clock.now() });
    if (outcome.stateChange !== undefined) {
      this.ctx.telemetry.workerTransition({ workerId: report.workerId, ...outcome.stateChange });
    }
    return outcome;
  }

  /** Directs workers to a state; returns the ids of the workers directed. */
  async direct(target: WorkerTarget, state: WorkerState): Promise<string[]> {
    const { workerIds } = await this.ctx.store.directWorkers({ target, state });
    this.ctx.logger.info({ target, state, workerIds }, 'workers directed');
    return workerIds;
  }

  async get(workerId: string): Promise<WorkerSnapshot> {
    const snapshot = await this.ctx.store.getWorker(workerId);
    if (snapshot === undefined) throw workerNotFound(workerId);
    return snapshot;
  }

  async list(filter: { label?: string; queue?: string }): Promise<WorkerSnapshot[]> {
    const all = await this.ctx.store.listWorkers();
    return all.filter(
      ({ worker }) =>
        (filter.label === undefined || worker.labels.includes(filter.label)) &&
        (filter.queue === undefined || worker.queues.includes(filter.queue)),
    );
  }
}
