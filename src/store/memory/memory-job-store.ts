import { duplicateJob, duplicateWorker, invalidTransition, jobNotFound, leaseNotHeld, workerNotFound } from '../../domain/errors';
import { TERMINAL_STATES, type Job, type TerminalState } from '../../domain/job';
import { assertTransition } from '../../domain/job-state-machine';
import { claimLease, confirmedLease, leaseProblem, leaseToken } from '../../domain/lease';
import type { RetentionPolicy } from '../../domain/retention';
import { softTimeoutAt, waitingDeadline } from '../../domain/timeouts';
import type { JobTransition } from '../../domain/transition';
import { desiredState, type Worker } from '../../domain/worker';
import type {
  AckParams,
  BeatOutcome,
  BeatParams,
  ClaimParams,
  ClaimResult,
  DirectParams,
  DiscardWaitingParams,
  ExtendLeaseParams,
  FailParams,
  JobStore,
  Page,
  PageRequest,
  ProgressParams,
  QueueCounts,
  RecoverParams,
  ReleaseParams,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  SettlementOutcome,
  StateChange,
  WorkerPageRequest,
  WorkerSnapshot,
  WorkerStateFields,
} from '../job-store';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { auditTables } from './memory-audit';
import { MemoryTables, transition, type JobSlot, type TimedEntry, type WorkerSlot } from './memory-tables';
import { checkRoom, DEFAULT_MEMORY_STORE_LIMITS, type MemoryStoreLimits } from './memory-store-limits';
import type { MinHeap } from './min-heap';
import { storedBytes } from './stored-size';

const WAITING_STATES: ReadonlySet<string> = new Set(['scheduled', 'available', 'pending', 'retryable']);

/**
 * MemoryJobStore keeps everything in this process: the embedded default,
 * for development and single-process use. Each method runs to completion
 * without awaiting, so every call is atomic with respect to every other.
 *
 * Its memory is bounded: enqueues that would take it past `maxJobs` jobs or
 * `maxBytes` of stored size are refused (queue_full, retryable) until
 * retention removes finished jobs. Jobs that grow once stored (results,
 * errors, checkpoints) are counted but never refused: refusing an Ack would
 * only make the job run again.
 */
export class MemoryJobStore implements JobStore {
  private readonly tables = new MemoryTables();
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  private readonly limits: Readonly<MemoryStoreLimits>;

  constructor(limits: Partial<MemoryStoreLimits> = {}) {
    this.limits = { ...DEFAULT_MEMORY_STORE_LIMITS, ...limits };
  }

  async enqueue(jobs: readonly Job[]): Promise<void> {
    const ids = new Set<string>();
    let bytes = 0;
    const sizes = jobs.map((job) => {
      if (this.tables.jobs.has(job.id) || ids.has(job.id)) throw duplicateJob(job.id);
      ids.add(job.id);
      const size = storedBytes(job);
      bytes += size;
      return size;
    });
    checkRoom(this.limits, { jobs: this.tables.jobs.size, bytes: this.tables.storedBytes }, { jobs: jobs.length, bytes });
    jobs.forEach((job, i) => this.tables.insert(job, sizes[i]!));
    this.flush();
  }

  async getJob(jobId: string): Promise<Job | undefined> {
    return this.tables.jobs.get(jobId)?.job;
  }

  async getJobs(jobIds: readonly string[]): Promise<(Job | undefined)[]> {
    return jobIds.map((id) => this.tables.jobs.get(id)?.job);
  }

  async claim(params: ClaimParams): Promise<ClaimResult> {
    const entry = this.workerSlot(params.workerId);
    if (desiredState(entry.worker) !== 'running') return { isRunning: false, jobs: [], freeCapacity: 0, isBudgetSpent: false };
    const limit = Math.min(params.max, entry.worker.concurrency - entry.held.size);
    const jobs: Job[] = [];
    let bytes = 0;
    let isBudgetSpent = false;
    for (const queue of params.queues) {
      while (!isBudgetSpent && jobs.length < limit) {
        const slot = this.tables.firstReady(queue);
        if (slot === undefined) break;
        // Past its waiting deadline: never started; the expiry pass discards it.
        const deadline = waitingDeadline(slot.job);
        if (deadline !== undefined && deadline <= params.now) {
          this.tables.dropFirstReady(queue, deadline);
          continue;
        }
        // A job that does not fit the byte budget stays first in its queue for the next claim.
        isBudgetSpent = jobs.length > 0 && bytes + slot.bytes > params.maxBytes;
        if (isBudgetSpent) break;
        this.tables.dropFirstReady(queue);
        bytes += slot.bytes;
        const attempt = slot.job.attempt + 1;
        const started = { ...slot.job, startedAt: params.now };
        const lease = claimLease(started, params.workerId, leaseToken(params.leaseNonce, attempt), params.now, params.confirmWithinMs);
        jobs.push(
          this.tables.update(slot, {
            state: 'active',
            attempt,
            startedAt: params.now,
            lease,
            progress: undefined,
            progressData: undefined,
          }),
        );
        entry.held.add(slot.job.id);
      }
    }
    this.flush();
    return { isRunning: true, jobs, freeCapacity: Math.max(0, entry.worker.concurrency - entry.held.size), isBudgetSpent };
  }

  async releaseUndelivered(params: ReleaseParams): Promise<JobTransition[]> {
    const transitions: JobTransition[] = [];
    for (const { jobId, leaseToken: token } of params.leases) {
      const slot = this.tables.jobs.get(jobId);
      const lease = slot?.job.lease;
      if (slot === undefined || lease === undefined || lease.token !== token) continue;
      if (params.requireUnconfirmedLapse) {
        const lastBeatAt = this.tables.workers.get(lease.workerId)?.worker.lastBeatAt ?? 0;
        if (lease.isConfirmed || lease.expiresAt > params.now || lastBeatAt <= (slot.job.startedAt ?? 0)) continue;
      }
      const before = slot.job;
      this.tables.releaseHeld(lease.workerId, jobId);
      this.tables.update(slot, { state: 'available', attempt: before.attempt - 1, lease: undefined, enqueuedAt: params.now });
      transitions.push(transition(before, slot.job));
    }
    this.flush();
    return transitions;
  }

  async ack(params: AckParams): Promise<SettlementOutcome[]> {
    const outcomes = params.items.map((item): SettlementOutcome => {
      const slot = this.heldSlot(item.jobId, params.workerId, item.leaseToken);
      if (slot instanceof Error) return { ok: false, error: slot };
      const before = slot.job;
      this.tables.releaseHeld(params.workerId, item.jobId);
      // ojs-progress 8.1: a completed job that reported progress is at 1.0.
      const progress = before.progress === undefined ? undefined : 1;
      this.tables.update(slot, {
        state: 'completed',
        completedAt: params.now,
        result: item.result,
        error: undefined,
        lease: undefined,
        progress,
      });
      return { ok: true, transition: transition(before, slot.job) };
    });
    this.flush();
    return outcomes;
  }

  async fail(params: FailParams): Promise<SettlementOutcome[]> {
    const outcomes = params.items.map((item): SettlementOutcome => {
      const slot = this.heldSlot(item.jobId, params.workerId, item.leaseToken);
      if (slot instanceof Error) return { ok: false, error: slot };
      const settled: SettlementOutcome = { ok: true, transition: this.tables.applyOutcome(slot, item.outcome, params.now) };
      if (slot.job.nextRetryAt !== undefined) settled.nextRetryAt = slot.job.nextRetryAt;
      return settled;
    });
    this.flush();
    return outcomes;
  }

  async extendLease(params: ExtendLeaseParams): Promise<number> {
    const slot = this.heldSlot(params.jobId, params.workerId, params.leaseToken);
    if (slot instanceof Error) throw slot;
    return this.renewLease(slot, params.now);
  }

  async recordProgress(params: ProgressParams): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    const slot = this.heldSlot(params.jobId, params.workerId, params.leaseToken);
    if (slot instanceof Error) return { applied: false };
    const patch: Partial<Job> = {};
    if (params.progress !== undefined) patch.progress = mergeProgress(slot.job.progress, params.progress);
    if (params.data !== undefined) patch.progressData = params.data;
    if (params.checkpoint !== undefined) patch.lastCheckpoint = params.checkpoint;
    this.tables.update(slot, patch);
    return { applied: true, leaseExpiresAt: this.renewLease(slot, params.now) };
  }

  async cancel(jobId: string, now: number): Promise<StateChange> {
    const slot = this.jobSlot(jobId);
    const before = slot.job;
    if (before.state === 'cancelled') return { job: before, from: before.state };
    assertTransition(jobId, before.state, 'cancelled');
    if (before.lease !== undefined) {
      this.tables.releaseHeld(before.lease.workerId, jobId);
      this.tables.signal({ kind: 'jobsCancelled', workerId: before.lease.workerId, jobIds: [jobId] });
    }
    const job = this.tables.update(slot, { state: 'cancelled', completedAt: now, lease: undefined, nextRetryAt: undefined });
    this.flush();
    const change: StateChange = { job, from: before.state };
    if (before.lease !== undefined) change.workerId = before.lease.workerId;
    return change;
  }

  async activate(jobId: string, now: number): Promise<StateChange> {
    const slot = this.jobSlot(jobId);
    const from = slot.job.state;
    if (from !== 'pending') throw invalidTransition(jobId, from, 'available');
    this.tables.update(slot, { state: 'available', enqueuedAt: now });
    this.flush();
    return { job: slot.job, from };
  }

  async retry(jobId: string, now: number): Promise<StateChange> {
    const slot = this.jobSlot(jobId);
    const from = slot.job.state;
    if (from !== 'discarded') throw invalidTransition(jobId, from, 'available');
    this.tables.update(slot, {
      state: 'available',
      attempt: 0,
      enqueuedAt: now,
      completedAt: undefined,
      error: undefined,
      errors: [],
      result: undefined,
      deadLetter: false,
      progress: undefined,
      progressData: undefined,
    });
    this.flush();
    return { job: slot.job, from };
  }

  async promoteDue(now: number, limit: number): Promise<JobTransition[]> {
    const transitions: JobTransition[] = [];
    const { due } = this.tables;
    while (transitions.length < limit && (due.peek()?.at ?? Infinity) <= now) {
      const slot = this.tables.current(due.pop()!);
      if (slot === undefined) continue;
      const job = slot.job;
      this.tables.update(slot, { state: 'available', enqueuedAt: now, nextRetryAt: undefined });
      transitions.push(transition(job, slot.job));
    }
    this.flush();
    return transitions;
  }

  async findExpiredWaiting(now: number, limit: number): Promise<Job[]> {
    return this.surface(this.tables.expiries, now, limit, (entry) => this.tables.current(entry) !== undefined);
  }

  async discardWaiting(params: DiscardWaitingParams): Promise<JobTransition[]> {
    const transitions: JobTransition[] = [];
    for (const item of params.items) {
      const slot = this.tables.jobs.get(item.jobId);
      if (slot === undefined || slot.job.state !== item.expectedState || !WAITING_STATES.has(slot.job.state)) continue;
      const before = slot.job;
      this.tables.update(slot, {
        state: 'discarded',
        completedAt: params.now,
        error: item.error,
        errors: item.errors,
        nextRetryAt: undefined,
      });
      transitions.push(transition(before, slot.job));
    }
    this.flush();
    return transitions;
  }

  async takeDueSoftTimeouts(now: number, limit: number): Promise<{ jobId: string; workerId: string }[]> {
    const due: { jobId: string; workerId: string }[] = [];
    while (due.length < limit && (this.tables.softTimeouts.peek()?.at ?? Infinity) <= now) {
      const job = this.tables.takeSoftTimeout()?.job;
      if (job?.lease !== undefined) due.push({ jobId: job.id, workerId: job.lease.workerId });
    }
    return due;
  }

  async findExpiredLeases(now: number, limit: number): Promise<Job[]> {
    return this.surface(this.tables.leases, now, limit, (entry) => this.tables.isLiveLease(entry));
  }

  async listActiveHeartbeats(limit: number): Promise<{ queue: string; renewedAt: number }[]> {
    const found: { queue: string; renewedAt: number }[] = [];
    for (const { held } of this.tables.workers.values()) {
      for (const id of held) {
        const job = this.tables.jobs.get(id)?.job;
        if (job?.lease !== undefined) found.push({ queue: job.queue, renewedAt: job.lease.renewedAt });
        if (found.length >= limit) return found;
      }
    }
    return found;
  }

  async recover(params: RecoverParams): Promise<JobTransition[]> {
    const transitions: JobTransition[] = [];
    for (const item of params.items) {
      const slot = this.tables.jobs.get(item.jobId);
      const lease = slot?.job.lease;
      if (slot === undefined || lease === undefined || lease.token !== item.leaseToken) continue;
      if (item.requireExpired && lease.expiresAt > params.now) continue;
      transitions.push(this.tables.applyOutcome(slot, item.outcome, params.now));
    }
    this.flush();
    return transitions;
  }

  async pruneTerminal(now: number, retention: RetentionPolicy, limit: number): Promise<number> {
    const retentionMs: Record<TerminalState, number> = {
      completed: retention.completedMs,
      cancelled: retention.cancelledMs,
      discarded: retention.discardedMs,
    };
    let excess = retention.maxJobs > 0 ? this.tables.terminalCount() - retention.maxJobs : 0;
    let pruned = 0;
    while (pruned < limit) {
      // The oldest entry among the three states goes first when over the cap.
      const heads = TERMINAL_STATES.map((state) => ({ state, head: this.tables.finished[state].peek() }))
        .filter((h) => h.head !== undefined && (excess > 0 || h.head.at <= now - retentionMs[h.state]))
        .toSorted((a, b) => a.head!.at - b.head!.at);
      const next = heads[0];
      if (next === undefined) break;
      const slot = this.tables.current(this.tables.finished[next.state].pop()!);
      if (slot === undefined) continue;
      this.tables.remove(slot);
      excess -= 1;
      pruned += 1;
    }
    return pruned;
  }

  async registerWorker(worker: Worker): Promise<void> {
    if (this.tables.workers.has(worker.workerId)) throw duplicateWorker(worker.workerId);
    this.tables.addWorker(worker);
  }

  async getWorker(workerId: string): Promise<WorkerSnapshot | undefined> {
    const slot = this.tables.workers.get(workerId);
    return slot === undefined ? undefined : snapshot(slot);
  }

  async listWorkers(request: WorkerPageRequest): Promise<Page<WorkerSnapshot>> {
    const { filter } = request;
    const budget = filter === undefined ? request.limit : request.scanBudget;
    return this.tables.workerIds.page(request.after, request.limit, budget, (id) => {
      const slot = this.tables.workers.get(id)!;
      if (filter?.label !== undefined && !slot.worker.labels.includes(filter.label)) return undefined;
      if (filter?.queue !== undefined && !slot.worker.queues.includes(filter.queue)) return undefined;
      return snapshot(slot);
    });
  }

  async recordBeat(params: BeatParams): Promise<BeatOutcome> {
    const slot = this.workerSlot(params.workerId);
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
    for (const jobId of params.activeJobIds) {
      const job = this.tables.jobs.get(jobId)?.job;
      if (job === undefined) continue;
      if (job.lease?.workerId === params.workerId) {
        this.renewLease(this.tables.jobs.get(jobId)!, params.now);
        if (softTimeoutAt(job) <= params.now) timedOutJobIds.push(jobId);
      } else if (job.state === 'cancelled') cancelledJobIds.push(jobId);
      else if (job.state !== 'completed') reclaimedJobIds.push(jobId);
    }
    this.signalIfRedirected(before, slot.worker);
    this.flush();
    return { result: 'applied', desiredState: desiredState(slot.worker), cancelledJobIds, timedOutJobIds, reclaimedJobIds };
  }

  async directWorker(params: DirectParams): Promise<'applied' | 'conflict'> {
    const slot = this.workerSlot(params.workerId);
    const before = slot.worker;
    if (!sameStateFields(before, params.expected)) return 'conflict';
    slot.worker = { ...before, state: params.next.state, directive: params.next.directive };
    this.signalIfRedirected(before, slot.worker);
    this.flush();
    return 'applied';
  }

  async findSilentWorkers(cutoff: number, limit: number): Promise<WorkerSnapshot[]> {
    const silent: WorkerSnapshot[] = [];
    for (const slot of this.tables.workers.values()) {
      if (silent.length >= limit) break;
      if (slot.worker.lastBeatAt < cutoff) silent.push(snapshot(slot));
    }
    return silent;
  }

  async removeWorker(params: RemoveWorkerParams): Promise<RemoveWorkerOutcome> {
    const slot = this.tables.workers.get(params.workerId);
    if (slot === undefined || (params.ifLastBeatAt !== undefined && slot.worker.lastBeatAt !== params.ifLastBeatAt)) {
      return { removed: false, transitions: [] };
    }
    const covered = new Map(params.recoveries.map((r) => [r.jobId, r.leaseToken]));
    for (const jobId of slot.held) {
      const lease = this.tables.jobs.get(jobId)?.job.lease;
      // A held id whose job is not active under this worker's lease reserves nothing: it goes with the worker.
      if (lease?.workerId !== params.workerId) continue;
      if (covered.get(jobId) !== lease.token) return { removed: false, transitions: [] };
    }
    const transitions: JobTransition[] = [];
    for (const recovery of params.recoveries) {
      const jobSlot = this.tables.jobs.get(recovery.jobId);
      if (jobSlot === undefined || leaseProblem(jobSlot.job, params.workerId, recovery.leaseToken) !== undefined) continue;
      transitions.push(this.tables.applyOutcome(jobSlot, recovery.outcome, params.now));
    }
    this.tables.deleteWorker(params.workerId);
    this.tables.signal({ kind: 'workerRemoved', workerId: params.workerId });
    this.flush();
    return { removed: true, transitions };
  }

  async listQueues(request: PageRequest): Promise<Page<QueueCounts>> {
    return this.tables.queueNames.page(request.after, request.limit, request.limit, (queue) => this.tables.queueCounts(queue));
  }

  async audit(): Promise<string[]> {
    return auditTables(this.tables);
  }

  subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async publish(signal: PublishedSignal): Promise<void> {
    this.tables.signal(signal);
    this.flush();
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  private flush(): void {
    for (const signal of this.tables.drainSignals()) {
      for (const listener of this.listeners) listener(signal);
    }
  }

  private jobSlot(jobId: string): JobSlot {
    const slot = this.tables.jobs.get(jobId);
    if (slot === undefined) throw jobNotFound(jobId);
    return slot;
  }

  private workerSlot(workerId: string): WorkerSlot {
    const slot = this.tables.workers.get(workerId);
    if (slot === undefined) throw workerNotFound(workerId);
    return slot;
  }

  /** The job if `workerId` holds its current lease, else the refusal. */
  private heldSlot(jobId: string, workerId: string, token: string): JobSlot | Error {
    const slot = this.tables.jobs.get(jobId);
    if (slot === undefined) return jobNotFound(jobId);
    const problem = leaseProblem(slot.job, workerId, token);
    return problem === undefined ? slot : leaseNotHeld(jobId, problem, slot.job.state);
  }

  private renewLease(slot: JobSlot, now: number): number {
    const before = slot.job.lease!;
    const renewed = confirmedLease(slot.job, before, now);
    this.tables.update(slot, { lease: renewed });
    // A lease capped by a fixed deadline (timeout, total timeout) may keep its expiry: one entry is enough.
    if (renewed.expiresAt !== before.expiresAt) this.tables.indexRenewedLease(slot);
    return renewed.expiresAt;
  }

  private signalIfRedirected(before: Worker, after: Worker): void {
    const state = desiredState(after);
    if (state !== desiredState(before)) this.tables.signal({ kind: 'workerDirected', workerId: after.workerId, state });
  }

  /**
   * The jobs of the due entries of `heap` that `isLive` accepts; stale ones
   * are dropped. Live entries are put back, so a job stays findable until a
   * change actually applies to it.
   */
  private surface(heap: MinHeap<TimedEntry>, now: number, limit: number, isLive: (entry: TimedEntry) => boolean): Job[] {
    const surfaced: TimedEntry[] = [];
    const found: Job[] = [];
    while (found.length < limit && (heap.peek()?.at ?? Infinity) <= now) {
      const entry = heap.pop()!;
      if (!isLive(entry)) continue;
      surfaced.push(entry);
      found.push(this.tables.jobs.get(entry.id)!.job);
    }
    for (const entry of surfaced) heap.push(entry);
    return found;
  }
}

function snapshot(slot: WorkerSlot): WorkerSnapshot {
  return { worker: slot.worker, heldJobIds: [...slot.held] };
}

/** ojs-progress 5.1: clamped to 0..1, and never lower than what the attempt reported. */
function mergeProgress(previous: number | undefined, reported: number): number {
  const clamped = Math.min(1, Math.max(0, reported));
  return previous === undefined ? clamped : Math.max(previous, clamped);
}

function sameStateFields(worker: Worker, expected: WorkerStateFields): boolean {
  return worker.state === expected.state && worker.directive === expected.directive;
}
