import type { Job } from '../../domain/job';
import { claimLease, leaseToken } from '../../domain/lease';
import { claimTime } from '../../domain/queue-limits';
import { waitingDeadline } from '../../domain/timeouts';
import { desiredState } from '../../domain/worker';
import type { ClaimParams, ClaimResult } from '../job-store';
import type { MemoryTables, WorkerSlot } from './memory-tables';

/**
 * Moves available jobs to active for a worker (JobStore.claim): queues in
 * the order given, skipping paused ones, then priority, then FIFO; never
 * beyond the worker's free capacity, the byte budget or a queue's limits.
 * A queue whose limits held back jobs the claim wanted, and the first of
 * its jobs started after that, record their sampled rate-limit facts
 * (domain rate-limit-events.ts).
 */
export function claimJobs(tables: MemoryTables, entry: WorkerSlot, params: ClaimParams): ClaimResult {
  if (desiredState(entry.worker) !== 'running')
    return { isRunning: false, jobs: [], freeCapacity: 0, isBudgetSpent: false, heldBackByRate: [], drainedQueues: [] };
  const limit = Math.min(params.max, entry.worker.concurrency - entry.held.size);
  const jobs: Job[] = [];
  let bytes = 0;
  let isBudgetSpent = false;
  const heldBackByRate: ClaimResult['heldBackByRate'] = [];
  const drainedQueues: string[] = [];
  const activeOf = (queue: string): number => tables.counts.get(queue)?.active ?? 0;
  // A paused queue delivers nothing; the worker's other queues still do.
  const open = params.queues.filter((queue) => !tables.paused.has(queue));
  const now = claimTime(params.now, tables.limiter.newestStart(open));
  for (const queue of open) {
    let { slots } = tables.limiter.allowance(queue, activeOf(queue), now);
    while (!isBudgetSpent && jobs.length < limit && slots > 0) {
      const slot = tables.firstReady(queue);
      if (slot === undefined) break;
      // Past its waiting deadline: never started; the expiry pass discards it.
      const deadline = waitingDeadline(slot.job);
      if (deadline !== undefined && deadline <= now) {
        tables.dropFirstReady(queue, deadline);
        continue;
      }
      // A job that does not fit the byte budget stays first in its queue for the next claim.
      isBudgetSpent = jobs.length > 0 && bytes + slot.bytes > params.maxBytes;
      if (isBudgetSpent) break;
      tables.dropFirstReady(queue);
      bytes += slot.bytes;
      const attempt = slot.job.attempt + 1;
      const started = { ...slot.job, startedAt: now };
      const lease = claimLease(started, params.workerId, leaseToken(params.leaseNonce, attempt), now, params.confirmWithinMs);
      const patch = { state: 'active', attempt, startedAt: now, lease, progress: undefined, progressData: undefined } as const;
      const released = tables.limiter.started(queue, now, slot.job.id);
      if (released !== undefined) tables.record(released);
      tables.transit(slot, patch, now);
      jobs.push(slot.job);
      entry.held.add(slot.job.id);
      slots -= 1;
    }
    if (tables.firstReady(queue) === undefined) {
      drainedQueues.push(queue);
      continue;
    }
    if (slots > 0) continue;
    const { opensAt, hold } = tables.limiter.allowance(queue, activeOf(queue), now);
    // Jobs wait for the rate window: say when it reopens, so that someone wakes then.
    if (opensAt !== undefined) heldBackByRate.push({ queue, opensAt });
    // Only a claim that wanted more of the queue's jobs was held back by its limits.
    const exceeded = hold !== undefined && !isBudgetSpent && jobs.length < limit ? tables.limiter.heldBack(queue, hold, now) : undefined;
    if (exceeded !== undefined) tables.record(exceeded);
  }
  const freeCapacity = Math.max(0, entry.worker.concurrency - entry.held.size);
  return { isRunning: true, jobs, freeCapacity, isBudgetSpent, heldBackByRate, drainedQueues };
}
