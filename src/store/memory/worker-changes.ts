import { duplicateWorker } from '../../domain/errors';
import type { RenewedLease } from '../../domain/event-facts';
import { leaseProblem } from '../../domain/lease';
import { softTimeoutAt } from '../../domain/timeouts';
import type { JobTransition } from '../../domain/transition';
import { desiredState, type Worker } from '../../domain/worker';
import type {
  BeatParams,
  DirectParams,
  Page,
  RecordedBeat,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  WorkerPageRequest,
  WorkerSnapshot,
  WorkerStateFields,
} from '../job-store';
import type { MemoryTables, WorkerSlot } from './memory-tables';

/**
 * The memory store's worker operations: registration, beats, directives
 * and removal, each recording its worker fact (and a beat its heartbeat
 * notice) in the same step as the change.
 */

export function registerWorker(tables: MemoryTables, worker: Worker): void {
  if (tables.workers.has(worker.workerId)) throw duplicateWorker(worker.workerId);
  tables.addWorker(worker);
  tables.record({
    kind: 'worker',
    at: worker.registeredAt,
    workerId: worker.workerId,
    from: 'none',
    to: worker.state,
    queues: [...worker.queues],
    concurrency: worker.concurrency,
  });
}

export function listWorkers(tables: MemoryTables, request: WorkerPageRequest): Page<WorkerSnapshot> {
  const { filter } = request;
  const budget = filter === undefined ? request.limit : request.scanBudget;
  return tables.workerIds.page(request.after, request.limit, budget, (id) => {
    const slot = tables.workers.get(id)!;
    if (filter?.label !== undefined && !slot.worker.labels.includes(filter.label)) return undefined;
    if (filter?.queue !== undefined && !slot.worker.queues.includes(filter.queue)) return undefined;
    return snapshot(slot);
  });
}

/** A beat (JobStore.recordBeats), of a worker that may not be registered (`slot` undefined). */
export function recordBeat(tables: MemoryTables, slot: WorkerSlot | undefined, params: BeatParams): RecordedBeat {
  if (slot === undefined) return { result: 'not_found' };
  const before = slot.worker;
  const unchanged = { desiredState: desiredState(before), cancelledJobIds: [], timedOutJobIds: [], reclaimedJobIds: [] };
  if (params.sequence !== 0 && params.sequence <= before.lastSequence) return { result: 'stale', ...unchanged };
  if (!sameStateFields(before, params.expected)) return { result: 'conflict', ...unchanged };
  slot.worker = {
    ...before,
    state: params.next.state,
    directive: params.next.directive,
    lastBeatAt: params.now,
    lastSequence: params.sequence === 0 ? before.lastSequence : params.sequence,
    reportedJobIds: [...params.activeJobIds],
  };
  const cancelledJobIds: string[] = [];
  const timedOutJobIds: string[] = [];
  const reclaimedJobIds: string[] = [];
  const renewed: RenewedLease[] = [];
  for (const jobId of params.activeJobIds) {
    const jobSlot = tables.jobs.get(jobId);
    if (jobSlot === undefined) continue;
    const job = jobSlot.job;
    if (job.lease?.workerId === params.workerId) {
      const visibleUntil = tables.renewLease(jobSlot, params.now);
      renewed.push({ jobId, jobType: job.type, queue: job.queue, attempt: job.attempt, visibleUntil });
      if (softTimeoutAt(job) <= params.now) timedOutJobIds.push(jobId);
    } else if (job.state === 'cancelled') cancelledJobIds.push(jobId);
    else if (job.state !== 'completed') reclaimedJobIds.push(jobId);
  }
  if (slot.worker.state !== before.state) {
    const activeJobs = params.activeJobIds.length;
    tables.record({ kind: 'worker', at: params.now, workerId: params.workerId, from: before.state, to: slot.worker.state, activeJobs });
  }
  signalIfRedirected(tables, before, slot.worker);
  if (tables.heartbeats.isFollowed) {
    tables.heartbeats.add({ at: params.now, workerId: params.workerId, state: params.next.state, jobs: renewed });
  }
  return { result: 'applied', desiredState: desiredState(slot.worker), cancelledJobIds, timedOutJobIds, reclaimedJobIds };
}

/**
 * Applies a directive. It records no fact: a directive changes what the
 * worker is told (domain afterDirective keeps its state), and the worker's
 * state changes, recorded, when its beat reports it.
 */
export function directWorker(tables: MemoryTables, slot: WorkerSlot, params: DirectParams): 'applied' | 'conflict' {
  const before = slot.worker;
  if (!sameStateFields(before, params.expected)) return 'conflict';
  slot.worker = { ...before, state: params.next.state, directive: params.next.directive };
  signalIfRedirected(tables, before, slot.worker);
  return 'applied';
}

/** Removes a worker, applying the recoveries of the jobs it holds first; see JobStore.removeWorker. */
export function removeWorker(tables: MemoryTables, params: RemoveWorkerParams): RemoveWorkerOutcome {
  const slot = tables.workers.get(params.workerId);
  if (slot === undefined || (params.ifLastBeatAt !== undefined && slot.worker.lastBeatAt !== params.ifLastBeatAt)) {
    return { removed: false, transitions: [] };
  }
  const covered = new Map(params.recoveries.map((r) => [r.jobId, r.leaseToken]));
  let leased = 0;
  for (const jobId of slot.held) {
    const lease = tables.jobs.get(jobId)?.job.lease;
    // A held id whose job is not active under this worker's lease reserves nothing: it goes with the worker.
    if (lease?.workerId !== params.workerId) continue;
    if (covered.get(jobId) !== lease.token) return { removed: false, transitions: [] };
    leased += 1;
  }
  const transitions: JobTransition[] = [];
  for (const recovery of params.recoveries) {
    const jobSlot = tables.jobs.get(recovery.jobId);
    if (jobSlot === undefined || leaseProblem(jobSlot.job, params.workerId, recovery.leaseToken) !== undefined) continue;
    transitions.push(tables.applyOutcome(jobSlot, recovery.outcome, params.now));
  }
  tables.deleteWorker(params.workerId);
  const { worker } = slot;
  tables.record({
    kind: 'worker',
    at: params.now,
    workerId: worker.workerId,
    from: worker.state,
    to: 'removed',
    reason: params.reason,
    registeredAt: worker.registeredAt,
    activeJobs: leased,
    ...(params.reason === 'dead' ? { lastBeatAt: worker.lastBeatAt } : {}),
  });
  tables.signal({ kind: 'workerRemoved', workerId: params.workerId });
  return { removed: true, transitions };
}

export function snapshot(slot: WorkerSlot): WorkerSnapshot {
  return { worker: slot.worker, heldJobIds: [...slot.held] };
}

function signalIfRedirected(tables: MemoryTables, before: Worker, after: Worker): void {
  const state = desiredState(after);
  if (state !== desiredState(before)) tables.signal({ kind: 'workerDirected', workerId: after.workerId, state });
}

function sameStateFields(worker: Worker, expected: WorkerStateFields): boolean {
  return worker.state === expected.state && worker.directive === expected.directive;
}
