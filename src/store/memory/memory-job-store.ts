import { duplicateJob, invalidTransition, jobNotFound, scheduleNotFound, workerNotFound } from '../../domain/errors';
import type { HeartbeatNotice, RecordedFact } from '../../domain/event-facts';
import type { Job } from '../../domain/job';
import type { JobQuery } from '../../domain/job-query';
import { pageWithinBytes } from '../../domain/paging';
import { DEFAULT_EVENT_RETENTION, type EventRetention, type RetentionPolicy } from '../../domain/retention';
import { MAX_SCHEDULES, tooManySchedules, type Schedule } from '../../domain/schedule';
import type { JobTransition } from '../../domain/transition';
import type { Worker } from '../../domain/worker';
import type {
  AckParams,
  BeatParams,
  RecordedBeat,
  BulkChangeParams,
  BulkOutcome,
  CancelWorkflowParams,
  ClaimParams,
  ClaimResult,
  DirectParams,
  DiscardWaitingParams,
  DueSchedules,
  EnqueueOutcome,
  ExtendLeaseParams,
  FactPage,
  FailParams,
  FireTicksOutcome,
  FireTicksParams,
  JobStore,
  Page,
  PageRequest,
  PauseParams,
  PromotionPass,
  QueueLimitsParams,
  ProgressParams,
  QueueCounts,
  QueueStats,
  RecoverParams,
  RegisterScheduleParams,
  SchedulePauseParams,
  ReleaseParams,
  RemoveWorkerOutcome,
  RemoveWorkerParams,
  SettlementOutcome,
  StateChange,
  WorkerPageRequest,
  WorkerSnapshot,
  WorkflowRecord,
} from '../job-store';
import type { PublishedSignal, StoreSignal } from '../store-signal';
import { assertBeatBatchSize } from '../beat-batch';
import { claimJobs } from './claim-jobs';
import { activateJob, cancelJob, changeEach, deleteJob, retryJob } from './job-changes';
import { listPage } from './job-listing';
import { auditTables } from './memory-audit';
import { MemoryTables, zeroCounts, type JobSlot, type WorkerSlot } from './memory-tables';
import { checkRoom, resolveLimits, type MemoryStoreLimits } from './memory-store-limits';
import { ack, extendLease, fail, recordProgress, recover, releaseUndelivered } from './settle-jobs';
import { storedBytes } from './stored-size';
import { tickFacts } from './schedule-table';
import { applyUnique, planUnique } from './unique-enqueue';
import { discardWaiting, promoteDue, pruneTerminal, surfaceDue, takeDueSoftTimeouts } from './timed-changes';
import { advanceWorkflow, cancelWorkflowIn, insertWorkflow, pruneWorkflows, workflowRecord } from './workflow-changes';
import type { NewWorkflow } from '../../domain/workflow-creation';
import { directWorker, listWorkers, recordBeat, registerWorker, removeWorker, snapshot } from './worker-changes';

export interface MemoryJobStoreOptions extends Partial<MemoryStoreLimits> {
  /** How many facts, and for how long, the event log keeps (default DEFAULT_EVENT_RETENTION). */
  events?: EventRetention;
}

/**
 * MemoryJobStore keeps everything in this process: the embedded default,
 * for development and single-process use. Each method runs to completion
 * without awaiting, so every call is atomic with respect to every other,
 * and the facts it records are in the log when it returns. Signals, facts
 * and heartbeat notices reach listeners once the call has made its changes.
 *
 * Its memory is bounded: enqueues that would take it past `maxJobs` jobs or
 * `maxBytes` of stored size are refused (queue_full, retryable) until
 * retention removes finished jobs. Jobs that grow once stored (results,
 * errors, checkpoints) are counted but never refused: refusing an Ack would
 * only make the job run again. The event log holds at most `maxEventBytes`
 * besides (memory-store-limits.ts).
 */
export class MemoryJobStore implements JobStore {
  private readonly tables: MemoryTables;
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  private readonly limits: Readonly<Required<MemoryStoreLimits>>;
  private readonly events: Readonly<EventRetention>;
  private isFlushing = false;

  constructor(options: MemoryJobStoreOptions = {}) {
    const { events = DEFAULT_EVENT_RETENTION, ...limits } = options;
    this.limits = resolveLimits(limits);
    this.events = events;
    this.tables = new MemoryTables(events, this.limits.maxEventBytes);
    this.tables.afterTransit = (slot, from, at) => advanceWorkflow(this.tables, slot, from, at);
  }

  async enqueue(jobs: readonly Job[]): Promise<EnqueueOutcome[]> {
    return this.flushed(this.store(jobs));
  }

  /** Stores new jobs as enqueue does; the caller flushes. */
  private store(jobs: readonly Job[]): EnqueueOutcome[] {
    const ids = new Set<string>();
    for (const job of jobs) {
      if (this.tables.jobs.has(job.id) || ids.has(job.id)) throw duplicateJob(job.id);
      ids.add(job.id);
    }
    // A batch is built at one instant, its creation time.
    const now = jobs[0]?.createdAt ?? 0;
    const plans = planUnique(this.tables, jobs, now);
    let bytes = 0;
    let stored = 0;
    const sizes = jobs.map((job, i) => {
      if (plans[i]!.kind === 'existing') return 0;
      const size = storedBytes(job);
      bytes += size;
      stored += 1;
      return size;
    });
    checkRoom(this.limits, { jobs: this.tables.jobs.size, bytes: this.tables.storedBytes }, { jobs: stored, bytes });
    return applyUnique(this.tables, jobs, plans, now, (job, i) => this.tables.insert(job, sizes[i]!));
  }

  async createWorkflow(workflow: NewWorkflow): Promise<void> {
    const sizes = workflow.jobs.map((job) => storedBytes(job));
    const bytes = sizes.reduce((sum, size) => sum + size, 0);
    checkRoom(this.limits, { jobs: this.tables.jobs.size, bytes: this.tables.storedBytes }, { jobs: sizes.length, bytes });
    insertWorkflow(this.tables, workflow, sizes);
    this.flush();
  }

  async getWorkflow(workflowId: string): Promise<WorkflowRecord | undefined> {
    return workflowRecord(this.tables, workflowId);
  }

  async cancelWorkflow(params: CancelWorkflowParams): Promise<{ workflow: WorkflowRecord; transitions: JobTransition[] }> {
    return this.flushed(cancelWorkflowIn(this.tables, params));
  }

  async getJob(jobId: string): Promise<Job | undefined> {
    return this.tables.jobs.get(jobId)?.job;
  }

  async getJobs(jobIds: readonly string[]): Promise<(Job | undefined)[]> {
    return jobIds.map((id) => this.tables.jobs.get(id)?.job);
  }

  async claim(params: ClaimParams): Promise<ClaimResult> {
    return this.flushed(claimJobs(this.tables, this.workerSlot(params.workerId), params));
  }

  async releaseUndelivered(params: ReleaseParams): Promise<JobTransition[]> {
    return this.flushed(releaseUndelivered(this.tables, params));
  }

  async ack(params: AckParams): Promise<SettlementOutcome[]> {
    return this.flushed(ack(this.tables, params));
  }

  async fail(params: FailParams): Promise<SettlementOutcome[]> {
    return this.flushed(fail(this.tables, params));
  }

  async extendLease(params: ExtendLeaseParams): Promise<number> {
    return this.flushed(extendLease(this.tables, params));
  }

  async recordProgress(params: ProgressParams): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    return this.flushed(recordProgress(this.tables, params));
  }

  async cancel(jobId: string, now: number): Promise<StateChange> {
    return this.changeOne(jobId, (slot) => cancelJob(this.tables, slot, now));
  }

  async activate(jobId: string, now: number): Promise<StateChange> {
    return this.changeOne(jobId, (slot) => activateJob(this.tables, slot, now));
  }

  async retry(jobId: string, now: number): Promise<StateChange> {
    return this.changeOne(jobId, (slot) => {
      // RetryJob is for the dead letter only; retryJobs also takes retryable jobs.
      if (slot.job.state !== 'discarded') throw invalidTransition(jobId, slot.job.state, 'available');
      return retryJob(this.tables, slot, now);
    });
  }

  async cancelJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return this.changeMany(params.jobIds, (slot) => cancelJob(this.tables, slot, params.now, params));
  }

  async retryJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return this.changeMany(params.jobIds, (slot) => retryJob(this.tables, slot, params.now, params));
  }

  async deleteJobs(params: BulkChangeParams): Promise<BulkOutcome[]> {
    return this.changeMany(params.jobIds, (slot) => {
      deleteJob(this.tables, slot);
      return undefined;
    });
  }

  async promoteDue(now: number, limit: number): Promise<PromotionPass> {
    return this.flushed(promoteDue(this.tables, now, limit));
  }

  async findExpiredWaiting(now: number, limit: number): Promise<Job[]> {
    return surfaceDue(this.tables, this.tables.expiries, now, limit, (entry) => this.tables.current(entry) !== undefined);
  }

  async discardWaiting(params: DiscardWaitingParams): Promise<JobTransition[]> {
    return this.flushed(discardWaiting(this.tables, params));
  }

  async takeDueSoftTimeouts(now: number, limit: number): Promise<{ jobId: string; workerId: string }[]> {
    return takeDueSoftTimeouts(this.tables, now, limit);
  }

  async findExpiredLeases(now: number, limit: number): Promise<Job[]> {
    return surfaceDue(this.tables, this.tables.leases, now, limit, (entry) => this.tables.isLiveLease(entry));
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
    return this.flushed(recover(this.tables, params));
  }

  async pruneTerminal(now: number, retention: RetentionPolicy, limit: number): Promise<number> {
    pruneWorkflows(this.tables, now, retention);
    return pruneTerminal(this.tables, now, retention, limit);
  }

  async registerWorker(worker: Worker): Promise<void> {
    registerWorker(this.tables, worker);
    this.flush();
  }

  async getWorker(workerId: string): Promise<WorkerSnapshot | undefined> {
    const slot = this.tables.workers.get(workerId);
    return slot === undefined ? undefined : snapshot(slot);
  }

  async listWorkers(request: WorkerPageRequest): Promise<Page<WorkerSnapshot>> {
    return listWorkers(this.tables, request);
  }

  async recordBeats(params: readonly BeatParams[]): Promise<RecordedBeat[]> {
    assertBeatBatchSize(params.length);
    return this.flushed(params.map((beat) => recordBeat(this.tables, this.tables.workers.get(beat.workerId), beat)));
  }

  async directWorker(params: DirectParams): Promise<'applied' | 'conflict'> {
    return this.flushed(directWorker(this.tables, this.workerSlot(params.workerId), params));
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
    return this.flushed(removeWorker(this.tables, params));
  }

  async listQueues(request: PageRequest): Promise<Page<QueueCounts>> {
    return this.tables.queueNames.page(request.after, request.limit, request.limit, (queue) => this.tables.queueCounts(queue));
  }

  async queueStats(queue: string, now: number): Promise<QueueStats> {
    const limits = this.tables.limiter.limitsOf(queue);
    const counts = this.tables.queueCounts(queue) ?? { queue, paused: false, ...zeroCounts(), ...(limits === undefined ? {} : { limits }) };
    return { counts, minutes: this.tables.throughput.minutes(queue, now) };
  }

  async setQueuePaused(params: PauseParams): Promise<{ changed: boolean }> {
    const changed = this.tables.setPaused(params.queue, params.paused, params.now, params.actor);
    this.flush();
    return { changed };
  }

  async setQueueLimits(params: QueueLimitsParams): Promise<void> {
    const released = this.tables.limiter.set(params.queue, params.limits, params.now);
    if (released !== undefined) this.tables.record(released);
    const available = this.tables.counts.get(params.queue)?.available ?? 0;
    if (available > 0 && !this.tables.paused.has(params.queue))
      this.tables.signal({ kind: 'jobsAvailable', queue: params.queue, count: available });
    this.flush();
  }

  async registerSchedule(params: RegisterScheduleParams): Promise<{ schedule: Schedule; created: boolean }> {
    const { spec, now } = params;
    const before = this.tables.schedules.get(spec.name);
    const max = params.maxSchedules ?? MAX_SCHEDULES;
    if (before === undefined && this.tables.schedules.size >= max) throw tooManySchedules(max);
    const schedule: Schedule = {
      ...spec,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
      revision: (before?.revision ?? 0) + 1,
      anchoredAt: params.anchoredAt ?? now,
      runCount: before?.runCount ?? 0,
    };
    if (before?.lastRunAt !== undefined) schedule.lastRunAt = before.lastRunAt;
    if (params.nextRunAt !== undefined && !spec.isPaused) schedule.nextRunAt = params.nextRunAt;
    this.putSchedule(schedule);
    return this.flushed({ schedule, created: before === undefined });
  }

  async removeSchedule(name: string): Promise<void> {
    if (!this.tables.schedules.delete(name)) throw scheduleNotFound(name);
  }

  async getSchedule(name: string): Promise<Schedule | undefined> {
    return this.tables.schedules.get(name);
  }

  async listSchedules(request: PageRequest): Promise<Page<Schedule>> {
    return this.tables.schedules.page(request.after, request.limit);
  }

  async setSchedulePaused(params: SchedulePauseParams): Promise<{ schedule: Schedule; changed: boolean }> {
    const before = this.tables.schedules.get(params.name);
    if (before === undefined) throw scheduleNotFound(params.name);
    if (before.isPaused === params.paused) return { schedule: before, changed: false };
    const { nextRunAt: _dropped, ...rest } = before;
    const schedule: Schedule = { ...rest, isPaused: params.paused, updatedAt: params.now };
    if (!params.paused && params.nextRunAt !== undefined) schedule.nextRunAt = params.nextRunAt;
    this.putSchedule(schedule);
    return this.flushed({ schedule, changed: true });
  }

  async findDueSchedules(now: number, limit: number): Promise<DueSchedules> {
    return this.tables.schedules.dueAt(now, limit);
  }

  /** Stores a schedule; one whose next tick comes before every other's is announced (ScheduleStore.findDueSchedules). */
  private putSchedule(schedule: Schedule): void {
    this.tables.schedules.put(schedule);
    if (schedule.nextRunAt !== undefined && this.tables.schedules.isFirstDue(schedule.name)) {
      this.tables.signal({ kind: 'scheduleDueAt', at: schedule.nextRunAt });
    }
  }

  async fireTicks(params: FireTicksParams): Promise<FireTicksOutcome> {
    const before = this.tables.schedules.get(params.name);
    if (before?.revision !== params.revision || before.nextRunAt !== params.expectedNextRunAt) return { fired: false };
    // Stored first: a refused enqueue (store full) leaves the schedule as it was, to fire again.
    const enqueued = params.tick === undefined ? undefined : this.store([params.tick.job])[0]!;
    const { nextRunAt: _passed, ...rest } = before;
    const schedule: Schedule = rest;
    if (params.nextRunAt !== undefined) schedule.nextRunAt = params.nextRunAt;
    if (params.tick !== undefined && enqueued?.deduplicated === false) {
      schedule.lastRunAt = params.tick.at;
      schedule.runCount += 1;
    }
    this.putSchedule(schedule);
    for (const fact of tickFacts(schedule, params, enqueued)) this.tables.record(fact);
    return this.flushed(enqueued === undefined ? { fired: true, schedule } : { fired: true, schedule, enqueued });
  }

  async listJobs(query: JobQuery): Promise<Page<Job>> {
    const page = pageWithinBytes(
      this.listPage(query),
      query.maxBytes,
      (slot) => slot.bytes,
      (slot) => slot.key,
    );
    return { ...page, items: page.items.map((slot) => slot.job) };
  }

  async findJobIds(query: JobQuery): Promise<Page<string>> {
    const page = this.listPage(query);
    return { ...page, items: page.items.map((slot) => slot.job.id) };
  }

  async readFacts(request: { after?: string; limit: number }): Promise<FactPage> {
    return this.tables.log.read(request.after, request.limit);
  }

  async followFacts(after: string | undefined, listener: (facts: RecordedFact[]) => void): Promise<() => void> {
    const unfollow = this.tables.log.follow(after, listener);
    // Facts already recorded after `after` are handed over in a microtask: never during this call, never inside a change.
    queueMicrotask(() => this.flush());
    return unfollow;
  }

  async pruneFacts(now: number): Promise<number> {
    return this.tables.log.prune(now);
  }

  async followHeartbeats(listener: (notice: HeartbeatNotice) => void): Promise<() => void> {
    return this.tables.heartbeats.follow(listener);
  }

  async audit(): Promise<string[]> {
    return auditTables(this.tables, { events: this.events, maxEventBytes: this.limits.maxEventBytes });
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
    this.tables.log.unfollowAll();
    this.tables.heartbeats.unfollowAll();
  }

  /**
   * Hands out what the call that just ran collected: signals, facts,
   * heartbeat notices. A listener that calls the store meanwhile gets its
   * own call's output from this loop, after the current batch: never
   * re-entrantly, and every follower still in log order.
   */
  private flush(): void {
    if (this.isFlushing) return;
    this.isFlushing = true;
    try {
      for (let more = true; more;) {
        const signals = this.tables.drainSignals();
        for (const signal of signals) for (const listener of this.listeners) listener(signal);
        const hadFacts = this.tables.log.deliver();
        const hadNotices = this.tables.heartbeats.deliver();
        more = signals.length > 0 || hadFacts || hadNotices;
      }
    } finally {
      this.isFlushing = false;
    }
  }

  /** Applies a single-job change (throwing its refusal) and answers the state change it made. */
  private changeOne(jobId: string, change: (slot: JobSlot) => JobTransition | undefined): StateChange {
    const slot = this.tables.jobs.get(jobId);
    if (slot === undefined) throw jobNotFound(jobId);
    const before = slot.job;
    change(slot);
    this.flush();
    const changed: StateChange = { job: slot.job, from: before.state };
    if (before.lease !== undefined) changed.workerId = before.lease.workerId;
    return changed;
  }

  private changeMany(jobIds: readonly string[], change: (slot: JobSlot) => JobTransition | undefined): BulkOutcome[] {
    return this.flushed(changeEach(this.tables, jobIds, change));
  }

  private listPage(query: JobQuery): Page<JobSlot> {
    return listPage(this.tables, query);
  }

  /** `result`, once what the call collected has been handed out. */
  private flushed<T>(result: T): T {
    this.flush();
    return result;
  }

  private workerSlot(workerId: string): WorkerSlot {
    const slot = this.tables.workers.get(workerId);
    if (slot === undefined) throw workerNotFound(workerId);
    return slot;
  }
}
