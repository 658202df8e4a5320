import type { EventFact, JobFact } from '../../domain/event-facts';
import type { FailureOutcome } from '../../domain/failure';
import { JOB_STATES, type Job, type JobState, type TerminalState } from '../../domain/job';
import { confirmedLease } from '../../domain/lease';
import type { EventRetention } from '../../domain/retention';
import type { Worker } from '../../domain/worker';
import { softTimeoutAt, waitingDeadline } from '../../domain/timeouts';
import { transitionOf, type JobTransition } from '../../domain/transition';
import type { QueueCounts } from '../job-store';
import type { StoreSignal } from '../store-signal';
import { FactLog } from './fact-log';
import { HeartbeatFeed } from './heartbeat-feed';
import { availableListingKey, listingKey, listingTimeOf, runRank } from '../../domain/job-query';
import { ListingIndexes } from './listing-indexes';
import { mergeSignals } from './merge-signals';
import { MinHeap } from './min-heap';
import { PriorityFifo } from './priority-fifo';
import { QueueLimiter } from './queue-limiter';
import { QueueThroughput } from './queue-throughput';
import { ScheduleTable } from './schedule-table';
import { SortedKeySet } from './sorted-key-set';
import { storedBytesDelta } from './stored-size';
import { holdsUniqueKey } from '../../domain/unique-policy';
import { WorkflowTable } from './workflow-table';

/** A stored job plus the bookkeeping that validates its index entries. */
export interface JobSlot {
  job: Job;
  /** The job's stored size (stored-size.ts), kept current by every change. */
  bytes: number;
  /**
   * Sequence of the job's current state. Every index entry carries the
   * sequence it was made for; one whose sequence is not the slot's is stale.
   */
  seq: number;
  /**
   * The job's key in the listings of its state (domain job-query.ts): its
   * available listing key (its run position), or its listing key by time.
   */
  key: string;
}

export interface WorkerSlot {
  worker: Worker;
  /** Ids of the active jobs reserved for the worker. */
  held: Set<string>;
}

/** An index entry: the job it names, for the state (sequence) it was made in. */
export interface IndexEntry {
  id: string;
  seq: number;
}

export interface TimedEntry extends IndexEntry {
  at: number;
}

/** A ready queue's entry: its run rank (domain runRank) is the job's position in its queue's run order. */
export interface ReadyEntry extends IndexEntry {
  rank: number;
}

/**
 * Index structures may hold this many stale entries beyond twice their live
 * ones before a sweep removes them: stale entries cost memory only, and a
 * sweep (O(n)) then runs at most once per that many changes.
 */
const SWEEP_SLACK = 1_024;

/**
 * The tables of the in-memory store and the low-level changes that keep its
 * indexes, counters, sizes, listings, throughput and event log consistent.
 * Jobs are immutable values: every change replaces the slot's job, so a job
 * handed out earlier is a stable snapshot. Signals, facts and heartbeat
 * notices are collected while a store call runs and handed out when it ends.
 *
 * Index entries are never removed from the middle of a heap or FIFO: a
 * change makes the old entry stale (its sequence no longer matches), readers
 * skip stale entries, and sweeps drop them once they outnumber live ones.
 */
export class MemoryTables {
  readonly jobs = new Map<string, JobSlot>();
  readonly workers = new Map<string, WorkerSlot>();
  /** The keys of `workers`, in order, for paged listings. */
  readonly workerIds = new SortedKeySet();
  /** Job counts per state of each queue that holds jobs; a queue's entry goes with its last job. */
  readonly counts = new Map<string, Record<JobState, number>>();
  /** Paused queues, whether they hold jobs or not. */
  readonly paused = new Set<string>();
  /** The queues that hold jobs or are paused (the keys of `counts` and `paused`), in order, for paged listings. */
  readonly queueNames = new SortedKeySet();
  /** The queues' fleet-wide limits and their logs of recent starts. */
  readonly limiter = new QueueLimiter();
  /** The listing keys of the jobs of states listed by time, per state and per state and queue. */
  readonly listings = new ListingIndexes();
  /** Completed, failed and discarded counts per queue and minute; a queue's go with it. */
  readonly throughput = new QueueThroughput();
  /** The facts every change records, for readFacts and followFacts. */
  readonly log: FactLog;
  /** Beats and lease extensions, for live heartbeat followers only. */
  readonly heartbeats = new HeartbeatFeed();
  /** Available jobs per queue, in run order (their listing too); a queue's entry goes with its last job. */
  readonly ready = new Map<string, PriorityFifo<ReadyEntry>>();
  /** Job counts per state over every queue. */
  readonly totals: Record<JobState, number> = zeroCounts();
  /** scheduled_at and next_retry_at deadlines. */
  readonly due = new MinHeap<TimedEntry>();
  /** Waiting deadlines (expires_at, enqueue TTL, total timeout). */
  readonly expiries = new MinHeap<TimedEntry>();
  /** Lease deadlines; a renewal adds an entry at the new expiry. */
  readonly leases = new MinHeap<TimedEntry>();
  /** Soft (execution) timeouts of active attempts; taking one removes its entry. */
  readonly softTimeouts = new MinHeap<TimedEntry>();
  /** Terminal jobs by completion time, per terminal state, for retention. */
  readonly finished: Readonly<Record<TerminalState, MinHeap<TimedEntry>>> = {
    completed: new MinHeap(),
    cancelled: new MinHeap(),
    discarded: new MinHeap(),
  };
  /**
   * Uniqueness keys (domain unique-policy.ts) and the id of the job holding
   * each: an entry goes when its job leaves its policy's states or the store,
   * so there are never more entries than jobs.
   */
  readonly uniqueKeys = new Map<string, string>();
  /** Cron schedules. */
  readonly schedules = new ScheduleTable();
  /** Workflows. */
  readonly workflows = new WorkflowTable();
  /**
   * Called after every recorded change of a job's state, in the same store
   * call: the store advances the job's workflow here (workflow-changes.ts).
   */
  afterTransit: (slot: JobSlot, from: JobState, at: number) => void = () => {};
  /** Sum of the stored sizes of all jobs. */
  storedBytes = 0;
  /** The latest time of a soft timeout taken so far: every entry due by then has left its heap. */
  private softTimeoutsTakenAt = -Infinity;
  /** The latest waiting deadline of a job a claim dropped from its ready queue for being past it. */
  private latestDroppedDeadline = -Infinity;
  private nextSeq = 1;
  /** The run sequence of the next job to become available (domain runRank). */
  private nextRunSeq = 1;
  private pendingSignals: StoreSignal[] = [];

  constructor(events: Readonly<EventRetention>, maxEventBytes: number) {
    this.log = new FactLog(events, maxEventBytes);
  }

  /** Stores a new job and records its enqueueing. */
  insert(job: Job, bytes: number): void {
    const slot: JobSlot = { job, bytes, seq: 0, key: '' };
    this.jobs.set(job.id, slot);
    this.storedBytes += bytes;
    this.count(job.queue, job.state, 1);
    this.index(slot);
    if (holdsUniqueKey(job)) this.uniqueKeys.set(job.unique.key, job.id);
    this.record(transitionOf(job, 'none', job.createdAt));
  }

  /** Drops the job's uniqueness key if it holds it (a later job may have taken it over). */
  private releaseUniqueKey(job: Job): void {
    if (job.unique !== undefined && this.uniqueKeys.get(job.unique.key) === job.id) this.uniqueKeys.delete(job.unique.key);
  }

  /**
   * Replaces the job with `patch` applied, keeping counts, sizes, indexes
   * and listings in step. A change of state goes through `transit`, which
   * records it, unless its caller records it itself.
   */
  update(slot: JobSlot, patch: Partial<Job>): Job {
    const before = slot.job;
    const delta = storedBytesDelta(before, patch);
    slot.job = { ...before, ...patch };
    slot.bytes += delta;
    this.storedBytes += delta;
    if (slot.job.state !== before.state) {
      // Counted into the new state before out of the old, so the queue never looks empty meanwhile.
      this.count(before.queue, slot.job.state, 1);
      this.count(before.queue, before.state, -1);
      this.unlist(before, slot.key);
      this.index(slot);
      if (before.state === 'available') this.sweepReady(before.queue);
      if (!holdsUniqueKey(slot.job)) this.releaseUniqueKey(before);
      this.sweep();
    }
    return slot.job;
  }

  /**
   * Applies a change of state and records it: the fact in the log (with
   * `extra` fields the transition cannot know, such as who asked) and the
   * queue's throughput. Returns the transition, the fact's very fields.
   */
  transit(slot: JobSlot, patch: Partial<Job>, at: number, extra?: Partial<JobTransition>): JobTransition {
    const before = slot.job;
    this.update(slot, patch);
    const made = transition(before, slot.job, at);
    if (extra !== undefined) Object.assign(made, extra);
    this.record(made);
    if (slot.job.workflow !== undefined) this.afterTransit(slot, before.state, at);
    return made;
  }

  /** Records a fact in the log; a job transition also counts in its queue's throughput. */
  record(fact: JobTransition | Exclude<EventFact, JobFact>): void {
    if (!('kind' in fact)) this.throughput.count(fact);
    this.log.record(fact);
  }

  /**
   * Forgets a job entirely (retention, deletion): its counts, size and
   * listing keys go at once; heap entries that name it go stale (no job has
   * their sequence) and leave with the next sweep.
   */
  remove(slot: JobSlot): void {
    const { queue, state } = slot.job;
    this.jobs.delete(slot.job.id);
    this.releaseUniqueKey(slot.job);
    this.storedBytes -= slot.bytes;
    this.unlist(slot.job, slot.key);
    this.count(queue, state, -1);
    this.sweep();
  }

  /** The slot an entry names, if the entry is live (made for the job's current state). */
  current(entry: IndexEntry): JobSlot | undefined {
    const slot = this.jobs.get(entry.id);
    return slot?.seq === entry.seq ? slot : undefined;
  }

  /** Whether a lease entry is live: current, and at the lease's present expiry. */
  isLiveLease(entry: TimedEntry): boolean {
    return this.current(entry)?.job.lease?.expiresAt === entry.at;
  }

  /** The first live ready job of `queue`, left first in its queue (stale entries before it are dropped). */
  firstReady(queue: string): JobSlot | undefined {
    let slot: JobSlot | undefined;
    this.ready.get(queue)?.peek((entry) => {
      slot = this.current(entry);
      return slot !== undefined;
    });
    return slot;
  }

  /**
   * Removes the first ready entry of `queue`: the live one `firstReady` just
   * returned. Given the job's waiting deadline, it was dropped for being past
   * it: the job stays available, without a ready entry, until the expiry
   * pass discards it.
   */
  dropFirstReady(queue: string, pastDeadline?: number): void {
    this.ready.get(queue)?.shift(() => true);
    if (pastDeadline !== undefined) this.latestDroppedDeadline = Math.max(this.latestDroppedDeadline, pastDeadline);
  }

  /** Whether an available job without a ready entry may have been dropped by a claim for being past `deadline`. */
  mayHaveDroppedReady(deadline: number): boolean {
    return deadline <= this.latestDroppedDeadline;
  }

  /** Removes the earliest soft-timeout entry; the job it names if the entry was live. */
  takeSoftTimeout(): JobSlot | undefined {
    const entry = this.softTimeouts.pop();
    if (entry === undefined) return undefined;
    this.softTimeoutsTakenAt = Math.max(this.softTimeoutsTakenAt, entry.at);
    return this.current(entry);
  }

  /** Whether a soft timeout due at `at` may have been taken already (its entry gone). */
  mayHaveTakenSoftTimeout(at: number): boolean {
    return at <= this.softTimeoutsTakenAt;
  }

  /** Renews the lease of an active job from `now` (domain confirmedLease); returns its new expiry. */
  renewLease(slot: JobSlot, now: number): number {
    const before = slot.job.lease!;
    const renewed = confirmedLease(slot.job, before, now);
    this.update(slot, { lease: renewed });
    // A lease capped by a fixed deadline (timeout, total timeout) may keep its expiry: one entry is enough.
    if (renewed.expiresAt !== before.expiresAt) {
      this.leases.push({ at: renewed.expiresAt, id: slot.job.id, seq: slot.seq });
      this.sweep();
    }
    return renewed.expiresAt;
  }

  /** Applies a decided failure outcome to an active job and releases its lease. */
  applyOutcome(slot: JobSlot, outcome: FailureOutcome, now: number): JobTransition {
    const before = slot.job;
    const patch: Partial<Job> = {
      state: outcome.state,
      error: outcome.error,
      errors: outcome.errors,
      lease: undefined,
      nextRetryAt: undefined,
    };
    if (outcome.state === 'retryable') patch.nextRetryAt = outcome.nextRetryAt;
    if (outcome.state === 'available') patch.enqueuedAt = now;
    if (outcome.state === 'discarded') {
      patch.completedAt = now;
      patch.deadLetter = outcome.deadLetter;
    }
    if (before.lease !== undefined) this.releaseHeld(before.lease.workerId, before.id);
    return this.transit(slot, patch, now);
  }

  releaseHeld(workerId: string, jobId: string): void {
    if (this.workers.get(workerId)?.held.delete(jobId) === true) {
      this.signal({ kind: 'capacityFreed', workerId, count: 1 });
    }
  }

  addWorker(worker: Worker): void {
    this.workers.set(worker.workerId, { worker, held: new Set() });
    this.workerIds.add(worker.workerId);
  }

  deleteWorker(workerId: string): void {
    this.workers.delete(workerId);
    this.workerIds.delete(workerId);
  }

  signal(signal: StoreSignal): void {
    this.pendingSignals.push(signal);
  }

  /** Signals collected since the last drain, with repeated ones merged. */
  drainSignals(): StoreSignal[] {
    const signals = this.pendingSignals;
    this.pendingSignals = [];
    return mergeSignals(signals);
  }

  /** How many terminal jobs are stored. */
  terminalCount(): number {
    return this.totals.completed + this.totals.cancelled + this.totals.discarded;
  }

  /** A listed queue's counts, pause and lag; undefined for a queue that holds no jobs and is not paused. */
  queueCounts(queue: string): QueueCounts | undefined {
    const counts = this.counts.get(queue);
    const paused = this.paused.has(queue);
    if (counts === undefined && !paused) return undefined;
    const listed: QueueCounts = { queue, paused, ...(counts ?? zeroCounts()) };
    const next = this.firstReady(queue)?.job.enqueuedAt;
    if (next !== undefined) listed.oldestAvailableAt = next;
    const limits = this.limiter.limitsOf(queue);
    if (limits !== undefined) listed.limits = limits;
    return listed;
  }

  /**
   * Pauses or resumes a queue, recording the fact; a resumed queue's
   * available jobs are signalled (their enqueues were not, while paused).
   * Returns whether anything changed.
   */
  setPaused(queue: string, paused: boolean, at: number, actor?: string): boolean {
    if (this.paused.has(queue) === paused) return false;
    if (paused) {
      this.paused.add(queue);
      this.queueNames.add(queue);
    } else {
      this.paused.delete(queue);
      const available = this.counts.get(queue)?.available;
      if (available === undefined) this.forgetQueue(queue);
      else if (available > 0) this.signal({ kind: 'jobsAvailable', queue, count: available });
    }
    this.record(actor === undefined ? { kind: 'queue', at, queue, paused } : { kind: 'queue', at, queue, paused, actor });
    return true;
  }

  /** Moves the counters of one queue and state by `delta`; a queue's entries go when it holds no job. */
  private count(queue: string, state: JobState, delta: number): void {
    let counts = this.counts.get(queue);
    if (counts === undefined) {
      counts = zeroCounts();
      this.counts.set(queue, counts);
      this.queueNames.add(queue);
    }
    counts[state] += delta;
    this.totals[state] += delta;
    if (delta < 0 && JOB_STATES.every((s) => counts[s] === 0)) {
      this.counts.delete(queue);
      this.ready.delete(queue);
      if (!this.paused.has(queue)) this.forgetQueue(queue);
    }
  }

  /** Drops what a queue that holds no jobs and is not paused still has: its name and throughput. */
  private forgetQueue(queue: string): void {
    this.queueNames.delete(queue);
    this.throughput.drop(queue);
  }

  /** Removes a job's key from the listings of its state `job.state` (available jobs have none: their ready entry goes stale). */
  private unlist(job: Job, key: string): void {
    if (job.state !== 'available') this.listings.delete(job.state, job.queue, key);
  }

  /**
   * Adds the index entries that the job's (new) state needs, under a new
   * sequence, and its listing key: its run position when it becomes
   * available (the next run sequence: last in line of its priority), or
   * its listing time.
   */
  private index(slot: JobSlot): void {
    const job = slot.job;
    const [id, seq] = [job.id, this.nextSeq++];
    slot.seq = seq;
    if (job.state !== 'available') {
      slot.key = listingKey(listingTimeOf(job), id);
      this.listings.add(job.state, job.queue, slot.key);
    }
    switch (job.state) {
      case 'available': {
        let fifo = this.ready.get(job.queue);
        if (fifo === undefined) {
          fifo = new PriorityFifo<ReadyEntry>();
          this.ready.set(job.queue, fifo);
        }
        const rank = runRank(job.priority, this.nextRunSeq++);
        slot.key = availableListingKey(job.queue, rank);
        fifo.push(job.priority, { id, seq, rank });
        // A paused queue's jobs are signalled when it resumes: waking streams now would claim nothing.
        if (!this.paused.has(job.queue)) this.signal({ kind: 'jobsAvailable', queue: job.queue, count: 1 });
        break;
      }
      case 'scheduled':
        this.waitForTime({ id, seq, at: job.scheduledAt ?? 0 });
        break;
      case 'retryable':
        this.waitForTime({ id, seq, at: job.nextRetryAt ?? 0 });
        break;
      case 'pending':
        break;
      case 'active':
        if (job.lease !== undefined) {
          this.leases.push({ id, seq, at: job.lease.expiresAt });
          this.softTimeouts.push({ id, seq, at: softTimeoutAt(job) });
        }
        return;
      case 'completed':
      case 'cancelled':
      case 'discarded':
        this.finished[job.state].push({ id, seq, at: job.completedAt ?? 0 });
        return;
    }
    const deadline = waitingDeadline(job);
    if (deadline !== undefined) this.expiries.push({ id, seq, at: deadline });
  }

  /** A job waits for its time: a due entry, announced when it is the earliest (JobStore.promoteDue). */
  private waitForTime(entry: TimedEntry): void {
    this.due.push(entry);
    if (this.due.peek() === entry) this.signal({ kind: 'dueAt', at: entry.at });
  }

  /** Sweeps the heaps whose stale entries outnumber their live ones (each check is O(1)). */
  private sweep(): void {
    const t = this.totals;
    this.sweepIfStale(this.due, t.scheduled + t.retryable);
    this.sweepIfStale(this.expiries, t.scheduled + t.available + t.pending + t.retryable);
    if (isMostlyStale(this.leases.size, t.active)) this.leases.retain((entry) => this.isLiveLease(entry));
    this.sweepIfStale(this.softTimeouts, t.active);
    this.sweepIfStale(this.finished.completed, t.completed);
    this.sweepIfStale(this.finished.cancelled, t.cancelled);
    this.sweepIfStale(this.finished.discarded, t.discarded);
  }

  private sweepIfStale(heap: MinHeap<TimedEntry>, live: number): void {
    if (isMostlyStale(heap.size, live)) heap.retain((entry) => this.current(entry) !== undefined);
  }

  private sweepReady(queue: string): void {
    const fifo = this.ready.get(queue);
    const available = this.counts.get(queue)?.available ?? 0;
    if (fifo !== undefined && isMostlyStale(fifo.size, available)) fifo.retain((entry) => this.current(entry) !== undefined);
  }
}

/** Whether an index of `size` entries, of which at most `live` can be live, is due for a sweep. */
function isMostlyStale(size: number, live: number): boolean {
  return size > 2 * live + SWEEP_SLACK;
}

export function zeroCounts(): Record<JobState, number> {
  return { scheduled: 0, available: 0, pending: 0, active: 0, completed: 0, retryable: 0, cancelled: 0, discarded: 0 };
}

/** The transition from `before` to `after`, naming the worker that held the job. */
export function transition(before: Job, after: Job, at: number): JobTransition {
  return transitionOf(after, before.state, at, before.lease?.workerId);
}
