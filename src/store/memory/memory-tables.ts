import type { FailureOutcome } from '../../domain/failure';
import type { Job, JobState, TerminalState } from '../../domain/job';
import type { Worker } from '../../domain/worker';
import { softTimeoutAt, waitingDeadline } from '../../domain/timeouts';
import { transitionOf, type JobTransition } from '../../domain/transition';
import type { QueueCounts } from '../job-store';
import type { StoreSignal } from '../store-signal';
import { MinHeap } from './min-heap';
import { PriorityFifo } from './priority-fifo';

/** A stored job plus the bookkeeping that validates its index entries. */
export interface JobSlot {
  job: Job;
  /** Sequence of the job's current entry in its ready queue. */
  readySeq: number;
}

export interface WorkerSlot {
  worker: Worker;
  /** Ids of the active jobs reserved for the worker. */
  held: Set<string>;
}

interface ReadyEntry {
  id: string;
  seq: number;
}

interface TimedEntry {
  at: number;
  id: string;
}

/**
 * The tables of the in-memory store and the low-level changes that keep its
 * indexes and counters consistent. Jobs are immutable values: every change
 * replaces the slot's job, so a job handed out earlier is a stable snapshot.
 * Signals are collected while a store call runs and emitted when it ends.
 */
export class MemoryTables {
  readonly jobs = new Map<string, JobSlot>();
  readonly workers = new Map<string, WorkerSlot>();
  /** scheduled_at and next_retry_at deadlines. */
  readonly due = new MinHeap<TimedEntry>();
  /** Waiting deadlines (expires_at, enqueue TTL, total timeout). */
  readonly expiries = new MinHeap<TimedEntry>();
  /** Lease deadlines, with the token they were set for. */
  readonly leases = new MinHeap<TimedEntry & { token: string }>();
  /** Soft (execution) timeouts of active attempts, with the lease token of the attempt. */
  readonly softTimeouts = new MinHeap<TimedEntry & { token: string }>();
  /** Terminal jobs by completion time, per terminal state, for retention. */
  readonly finished: Readonly<Record<TerminalState, MinHeap<TimedEntry>>> = {
    completed: new MinHeap(),
    cancelled: new MinHeap(),
    discarded: new MinHeap(),
  };
  private readonly ready = new Map<string, PriorityFifo<ReadyEntry>>();
  private readonly counts = new Map<string, Record<JobState, number>>();
  private nextReadySeq = 1;
  private pendingSignals: StoreSignal[] = [];

  insert(job: Job): void {
    const slot: JobSlot = { job, readySeq: 0 };
    this.jobs.set(job.id, slot);
    this.countsOf(job.queue)[job.state] += 1;
    this.index(slot);
  }

  /** Replaces the job with `patch` applied, keeping counts and indexes in step. */
  update(slot: JobSlot, patch: Partial<Job>): Job {
    const before = slot.job;
    slot.job = { ...before, ...patch };
    if (slot.job.state !== before.state) {
      const counts = this.countsOf(before.queue);
      counts[before.state] -= 1;
      counts[slot.job.state] += 1;
      this.index(slot);
    }
    return slot.job;
  }

  /** The first live ready job of `queue`, removed from its queue. */
  shiftReady(queue: string): JobSlot | undefined {
    const entry = this.ready.get(queue)?.shift((e) => {
      const slot = this.jobs.get(e.id);
      return slot !== undefined && slot.job.state === 'available' && slot.readySeq === e.seq;
    });
    return entry === undefined ? undefined : this.jobs.get(entry.id);
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
    this.update(slot, patch);
    return { ...transition(before, slot.job), errorType: outcome.error.type };
  }

  releaseHeld(workerId: string, jobId: string): void {
    if (this.workers.get(workerId)?.held.delete(jobId) === true) {
      this.signal({ kind: 'capacityFreed', workerId, count: 1 });
    }
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

  /** Forgets a job entirely (retention); index entries that name it go stale. */
  remove(slot: JobSlot): void {
    this.jobs.delete(slot.job.id);
    this.countsOf(slot.job.queue)[slot.job.state] -= 1;
  }

  /** How many terminal jobs are stored. */
  terminalCount(): number {
    let total = 0;
    for (const counts of this.counts.values()) total += counts.completed + counts.cancelled + counts.discarded;
    return total;
  }

  queueCounts(): QueueCounts[] {
    return [...this.counts.entries()].toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([queue, counts]) => ({ queue, ...counts }));
  }

  private countsOf(queue: string): Record<JobState, number> {
    let counts = this.counts.get(queue);
    if (counts === undefined) {
      counts = { scheduled: 0, available: 0, pending: 0, active: 0, completed: 0, retryable: 0, cancelled: 0, discarded: 0 };
      this.counts.set(queue, counts);
    }
    return counts;
  }

  /** Adds the index entries that the job's (new) state needs. */
  private index(slot: JobSlot): void {
    const job = slot.job;
    switch (job.state) {
      case 'available': {
        slot.readySeq = this.nextReadySeq++;
        let fifo = this.ready.get(job.queue);
        if (fifo === undefined) {
          fifo = new PriorityFifo<ReadyEntry>();
          this.ready.set(job.queue, fifo);
        }
        fifo.push(job.priority, { id: job.id, seq: slot.readySeq });
        this.signal({ kind: 'jobsAvailable', queue: job.queue, count: 1 });
        break;
      }
      case 'scheduled':
        this.due.push({ at: job.scheduledAt ?? 0, id: job.id });
        break;
      case 'retryable':
        this.due.push({ at: job.nextRetryAt ?? 0, id: job.id });
        break;
      case 'pending':
        break;
      case 'active':
        if (job.lease !== undefined) {
          this.leases.push({ at: job.lease.expiresAt, id: job.id, token: job.lease.token });
          this.softTimeouts.push({ at: softTimeoutAt(job), id: job.id, token: job.lease.token });
        }
        return;
      case 'completed':
      case 'cancelled':
      case 'discarded':
        this.finished[job.state].push({ at: job.completedAt ?? 0, id: job.id });
        return;
    }
    const deadline = waitingDeadline(job);
    if (deadline !== undefined) this.expiries.push({ at: deadline, id: job.id });
  }
}

/** The transition from `before` to `after`, naming the worker that held the job. */
export function transition(before: Job, after: Job): JobTransition {
  return transitionOf(after, before.state, before.lease?.workerId);
}

/** Folds per-job signals into one per queue or worker, summing counts. */
function mergeSignals(signals: StoreSignal[]): StoreSignal[] {
  if (signals.length < 2) return signals;
  const merged = new Map<string, StoreSignal>();
  for (const signal of signals) {
    const key =
      signal.kind === 'jobsAvailable' ? `a:${signal.queue}` : signal.kind === 'capacityFreed' ? `c:${signal.workerId}` : undefined;
    const previous = key === undefined ? undefined : merged.get(key);
    if (key === undefined) merged.set(`${merged.size}`, signal);
    else if (previous !== undefined && 'count' in previous && 'count' in signal) previous.count += signal.count;
    else merged.set(key, { ...signal });
  }
  return [...merged.values()];
}
