import {
  duplicateJob,
  duplicateWorker,
  invalidTransition,
  jobNotFound,
  leaseNotHeld,
  workerNotFound,
} from '../../domain/errors';
import type { Job } from '../../domain/job';
import type { JobTransition } from '../../domain/transition';
import { SERVER_ERROR_TYPES, appendError, stampError } from '../../domain/job-error';
import { assertTransition } from '../../domain/job-state-machine';
import { claimLease, confirmedLease, leaseProblem, leaseToken } from '../../domain/lease';
import { afterDirective, afterReport, desiredState, type Worker } from '../../domain/worker';
import type {
  AckParams,
  BeatOutcome,
  BeatParams,
  ClaimParams,
  ClaimResult,
  DirectOutcome,
  DirectParams,
  ExtendLeaseParams,
  FailParams,
  JobStore,
  QueueCounts,
  RecoverParams,
  ReleaseParams,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  SettlementOutcome,
  StateChange,
  WorkerSnapshot,
} from '../job-store';
import type { StoreSignal } from '../store-signal';
import { MemoryTables, transition, type JobSlot, type WorkerSlot } from './memory-tables';

/**
 * MemoryJobStore keeps everything in this process: the embedded default.
 * Each method runs to completion without awaiting, so every call is atomic
 * with respect to every other.
 */
export class MemoryJobStore implements JobStore {
  private readonly tables = new MemoryTables();
  private readonly listeners = new Set<(signal: StoreSignal) => void>();

  async enqueue(jobs: readonly Job[]): Promise<void> {
    const ids = new Set<string>();
    for (const job of jobs) {
      if (this.tables.jobs.has(job.id) || ids.has(job.id)) throw duplicateJob(job.id);
      ids.add(job.id);
    }
    for (const job of jobs) this.tables.insert(job);
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
    if (desiredState(entry.worker) !== 'running') return { isRunning: false, jobs: [], freeCapacity: 0, transitions: [] };
    const limit = Math.min(params.max, entry.worker.concurrency - entry.held.size);
    const jobs: Job[] = [];
    const transitions: JobTransition[] = [];
    for (const queue of params.queues) {
      while (jobs.length < limit) {
        const slot = this.tables.shiftReady(queue);
        if (slot === undefined) break;
        if (slot.job.expiresAt !== undefined && slot.job.expiresAt <= params.now) {
          transitions.push(this.discardExpired(slot, params.now));
          continue;
        }
        const attempt = slot.job.attempt + 1;
        const lease = claimLease(slot.job, params.workerId, leaseToken(params.leaseNonce, attempt), params.now, params.confirmWithinMs);
        jobs.push(this.tables.update(slot, { state: 'active', attempt, startedAt: params.now, lease }));
        entry.held.add(slot.job.id);
      }
    }
    this.flush();
    return { isRunning: true, jobs, freeCapacity: Math.max(0, entry.worker.concurrency - entry.held.size), transitions };
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
      this.tables.releaseHeld(params.workerId, item.jobId);
      const job = this.tables.update(slot, {
        state: 'completed',
        completedAt: params.now,
        result: item.result,
        error: undefined,
        lease: undefined,
      });
      return { ok: true, job };
    });
    this.flush();
    return outcomes;
  }

  async fail(params: FailParams): Promise<SettlementOutcome[]> {
    const outcomes = params.items.map((item): SettlementOutcome => {
      const slot = this.heldSlot(item.jobId, params.workerId, item.leaseToken);
      if (slot instanceof Error) return { ok: false, error: slot };
      this.tables.applyOutcome(slot, item.outcome, params.now);
      return { ok: true, job: slot.job };
    });
    this.flush();
    return outcomes;
  }

  async extendLease(params: ExtendLeaseParams): Promise<number> {
    const slot = this.heldSlot(params.jobId, params.workerId, params.leaseToken);
    if (slot instanceof Error) throw slot;
    return this.renewLease(slot, params.now);
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
    this.makeAvailable(slot, now);
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
    });
    this.flush();
    return { job: slot.job, from };
  }

  async promoteDue(now: number, limit: number): Promise<JobTransition[]> {
    const transitions: JobTransition[] = [];
    const { due, expiries, jobs } = this.tables;
    while (transitions.length < limit && (due.peek()?.at ?? Infinity) <= now) {
      const slot = jobs.get(due.pop()!.id);
      const job = slot?.job;
      if (slot === undefined || job === undefined) continue;
      const dueAt = job.state === 'scheduled' ? job.scheduledAt : job.state === 'retryable' ? job.nextRetryAt : undefined;
      if (dueAt === undefined || dueAt > now) continue;
      const before = job;
      this.makeAvailable(slot, now);
      transitions.push(transition(before, slot.job));
    }
    while (transitions.length < limit && (expiries.peek()?.at ?? Infinity) <= now) {
      const slot = jobs.get(expiries.pop()!.id);
      if (slot === undefined || slot.job.expiresAt === undefined || slot.job.expiresAt > now) continue;
      if (['scheduled', 'available', 'pending', 'retryable'].includes(slot.job.state)) {
        transitions.push(this.discardExpired(slot, now));
      }
    }
    this.flush();
    return transitions;
  }

  async findExpiredLeases(now: number, limit: number): Promise<Job[]> {
    const { leases, jobs } = this.tables;
    const surfaced: { at: number; id: string; token: string }[] = [];
    const expired: Job[] = [];
    while (expired.length < limit && (leases.peek()?.at ?? Infinity) <= now) {
      const entry = leases.pop()!;
      const job = jobs.get(entry.id)?.job;
      if (job?.lease === undefined || job.lease.token !== entry.token || job.lease.expiresAt !== entry.at) continue;
      surfaced.push(entry);
      expired.push(job);
    }
    // Keep the entries until the jobs are actually recovered.
    for (const entry of surfaced) leases.push(entry);
    return expired;
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

  async registerWorker(worker: Worker): Promise<void> {
    if (this.tables.workers.has(worker.workerId)) throw duplicateWorker(worker.workerId);
    this.tables.workers.set(worker.workerId, { worker, held: new Set() });
  }

  async getWorker(workerId: string): Promise<WorkerSnapshot | undefined> {
    const slot = this.tables.workers.get(workerId);
    return slot === undefined ? undefined : this.snapshot(slot);
  }

  async listWorkers(): Promise<WorkerSnapshot[]> {
    return [...this.tables.workers.values()].map((slot) => this.snapshot(slot));
  }

  async recordBeat(params: BeatParams): Promise<BeatOutcome> {
    const slot = this.workerSlot(params.workerId);
    const before = slot.worker;
    if (params.sequence !== 0 && params.sequence <= before.lastSequence) {
      return { desiredState: desiredState(before), isFresh: false, cancelledJobIds: [] };
    }
    const reported = afterReport(before, params.state);
    slot.worker = {
      ...before,
      state: reported.state,
      directive: reported.directive,
      lastBeatAt: params.now,
      lastSequence: params.sequence === 0 ? before.lastSequence : params.sequence,
      reportedJobIds: [...params.activeJobIds],
    };
    const cancelledJobIds: string[] = [];
    for (const jobId of params.activeJobIds) {
      const jobSlot = this.tables.jobs.get(jobId);
      if (jobSlot?.job.lease?.workerId === params.workerId) this.renewLease(jobSlot, params.now);
      else if (jobSlot?.job.state === 'cancelled') cancelledJobIds.push(jobId);
    }
    const desired = desiredState(slot.worker);
    if (desired !== desiredState(before)) this.tables.signal({ kind: 'workerDirected', workerId: params.workerId, state: desired });
    this.flush();
    const outcome: BeatOutcome = { desiredState: desired, isFresh: true, cancelledJobIds };
    if (reported.state !== before.state) outcome.stateChange = { from: before.state, to: reported.state };
    return outcome;
  }

  async directWorkers(params: DirectParams): Promise<DirectOutcome> {
    const { target } = params;
    const slots =
      'workerId' in target
        ? [this.workerSlot(target.workerId)]
        : [...this.tables.workers.values()].filter((slot) =>
            'label' in target ? slot.worker.labels.includes(target.label) : slot.worker.queues.includes(target.queue),
          );
    const workerIds: string[] = [];
    for (const slot of slots) {
      let next;
      try {
        next = afterDirective(slot.worker, params.state);
      } catch (error) {
        if ('workerId' in target) throw error;
        continue; // A terminating worker matched by label or queue is skipped.
      }
      const before = desiredState(slot.worker);
      slot.worker = { ...slot.worker, state: next.state, directive: next.directive };
      const desired = desiredState(slot.worker);
      if (desired !== before) this.tables.signal({ kind: 'workerDirected', workerId: slot.worker.workerId, state: desired });
      workerIds.push(slot.worker.workerId);
    }
    this.flush();
    return { workerIds };
  }

  async findSilentWorkers(cutoff: number, limit: number): Promise<WorkerSnapshot[]> {
    const silent: WorkerSnapshot[] = [];
    for (const slot of this.tables.workers.values()) {
      if (silent.length >= limit) break;
      if (slot.worker.lastBeatAt < cutoff) silent.push(this.snapshot(slot));
    }
    return silent;
  }

  async removeWorker(params: RemoveWorkerParams): Promise<RemoveWorkerOutcome> {
    const slot = this.tables.workers.get(params.workerId);
    const covered = new Set(params.recoveries.map((r) => r.jobId));
    if (
      slot === undefined ||
      (params.ifLastBeatAt !== undefined && slot.worker.lastBeatAt !== params.ifLastBeatAt) ||
      [...slot.held].some((jobId) => !covered.has(jobId))
    ) {
      return { removed: false, transitions: [] };
    }
    const transitions: JobTransition[] = [];
    for (const recovery of params.recoveries) {
      const jobSlot = this.tables.jobs.get(recovery.jobId);
      if (jobSlot === undefined || leaseProblem(jobSlot.job, params.workerId, recovery.leaseToken) !== undefined) continue;
      transitions.push(this.tables.applyOutcome(jobSlot, recovery.outcome, params.now));
    }
    this.tables.workers.delete(params.workerId);
    this.tables.signal({ kind: 'workerRemoved', workerId: params.workerId });
    this.flush();
    return { removed: true, transitions };
  }

  async queueCounts(): Promise<QueueCounts[]> {
    return this.tables.queueCounts();
  }

  subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
    const renewed = confirmedLease(slot.job, slot.job.lease!, now);
    this.tables.update(slot, { lease: renewed });
    this.tables.leases.push({ at: renewed.expiresAt, id: slot.job.id, token: renewed.token });
    return renewed.expiresAt;
  }

  /** Makes a waiting job available, or discards it if its expires_at has passed. */
  private makeAvailable(slot: JobSlot, now: number): void {
    if (slot.job.expiresAt !== undefined && slot.job.expiresAt <= now) {
      this.discardExpired(slot, now);
      return;
    }
    this.tables.update(slot, { state: 'available', enqueuedAt: now, nextRetryAt: undefined });
  }

  private discardExpired(slot: JobSlot, now: number): JobTransition {
    const before = slot.job;
    const error = stampError(
      { type: SERVER_ERROR_TYPES.expired, message: 'expires_at passed before the job could start' },
      before.attempt,
      now,
    );
    this.tables.update(slot, {
      state: 'discarded',
      completedAt: now,
      error,
      errors: appendError(before.errors, error),
      nextRetryAt: undefined,
    });
    return transition(before, slot.job);
  }

  private snapshot(slot: WorkerSlot): WorkerSnapshot {
    const heldJobs = [...slot.held].map((id) => this.tables.jobs.get(id)!.job);
    return { worker: slot.worker, heldJobs };
  }
}
