import type { Job } from '../../domain/job';
import { claimLease, leaseToken } from '../../domain/lease';
import { waitingDeadline } from '../../domain/timeouts';
import { desiredState } from '../../domain/worker';
import type { ClaimParams, ClaimResult } from '../job-store';
import type { MemoryTables, WorkerSlot } from './memory-tables';

/**
 * Moves available jobs to active for a worker (JobStore.claim): queues in
 * the order given, skipping paused ones, then priority, then FIFO; never
 * beyond the worker's free capacity or the byte budget.
 */
export function claimJobs(tables: MemoryTables, entry: WorkerSlot, params: ClaimParams): ClaimResult {
  if (desiredState(entry.worker) !== 'running') return { isRunning: false, jobs: [], freeCapacity: 0, isBudgetSpent: false };
  const limit = Math.min(params.max, entry.worker.concurrency - entry.held.size);
  const jobs: Job[] = [];
  let bytes = 0;
  let isBudgetSpent = false;
  for (const queue of params.queues) {
    // A paused queue delivers nothing; the worker's other queues still do.
    if (tables.paused.has(queue)) continue;
    while (!isBudgetSpent && jobs.length < limit) {
      const slot = tables.firstReady(queue);
      if (slot === undefined) break;
      // Past its waiting deadline: never started; the expiry pass discards it.
      const deadline = waitingDeadline(slot.job);
      if (deadline !== undefined && deadline <= params.now) {
        tables.dropFirstReady(queue, deadline);
        continue;
      }
      // A job that does not fit the byte budget stays first in its queue for the next claim.
      isBudgetSpent = jobs.length > 0 && bytes + slot.bytes > params.maxBytes;
      if (isBudgetSpent) break;
      tables.dropFirstReady(queue);
      bytes += slot.bytes;
      const attempt = slot.job.attempt + 1;
      const started = { ...slot.job, startedAt: params.now };
      const lease = claimLease(started, params.workerId, leaseToken(params.leaseNonce, attempt), params.now, params.confirmWithinMs);
      const patch = { state: 'active', attempt, startedAt: params.now, lease, progress: undefined, progressData: undefined } as const;
      tables.transit(slot, patch, params.now);
      jobs.push(slot.job);
      entry.held.add(slot.job.id);
    }
  }
  return { isRunning: true, jobs, freeCapacity: Math.max(0, entry.worker.concurrency - entry.held.size), isBudgetSpent };
}
