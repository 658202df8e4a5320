import { uniqueConflict } from '../../domain/errors';
import type { Job } from '../../domain/job';
import { isTerminal } from '../../domain/job-state-machine';
import { isDuplicate } from '../../domain/unique-policy';
import type { EnqueueOutcome } from '../job-store';
import { cancelJob } from './job-changes';
import type { MemoryTables } from './memory-tables';

/** What enqueue does with one job of a batch, as its unique policy decided. */
export type UniquePlan = { kind: 'store' } | { kind: 'existing'; job: Job } | { kind: 'replace'; holder: Job };

/**
 * Decides every job of a batch against the holders of their keys before
 * anything is stored, as if the jobs were enqueued one after another: an
 * earlier job of the batch holds its key for the later ones. Throws
 * uniqueConflict for the first duplicate under reject, so the batch is
 * all or nothing.
 */
export function planUnique(tables: MemoryTables, jobs: readonly Job[], now: number): UniquePlan[] {
  const takenByBatch = new Map<string, Job>();
  return jobs.map((job, i): UniquePlan => {
    if (job.unique === undefined) return { kind: 'store' };
    const { key, policy } = job.unique;
    const heldBy = takenByBatch.get(key) ?? holderOf(tables, key);
    if (heldBy !== undefined && isDuplicate(policy, heldBy, now)) {
      if (policy.onConflict === 'reject') throw uniqueConflict(`jobs[${i}].unique`, heldBy.id, heldBy.state, key);
      if (policy.onConflict === 'ignore') return { kind: 'existing', job: heldBy };
      takenByBatch.set(key, job);
      return { kind: 'replace', holder: heldBy };
    }
    takenByBatch.set(key, job);
    return { kind: 'store' };
  });
}

function holderOf(tables: MemoryTables, key: string): Job | undefined {
  const id = tables.uniqueKeys.get(key);
  return id === undefined ? undefined : tables.jobs.get(id)?.job;
}

/**
 * Applies the plans in batch order: a replaced job that has not finished is
 * cancelled (reason "replaced") before its successor is stored; a job
 * returned in another's place is read when its turn comes, so an earlier job
 * of the batch is returned as stored.
 */
export function applyUnique(
  tables: MemoryTables,
  jobs: readonly Job[],
  plans: readonly UniquePlan[],
  now: number,
  insert: (job: Job, i: number) => void,
): EnqueueOutcome[] {
  return jobs.map((job, i) => {
    const plan = plans[i]!;
    if (plan.kind === 'existing') return { job: tables.jobs.get(plan.job.id)?.job ?? plan.job, deduplicated: true };
    const outcome: EnqueueOutcome = { job, deduplicated: false };
    if (plan.kind === 'replace') {
      const slot = tables.jobs.get(plan.holder.id);
      const replaced = slot === undefined || isTerminal(slot.job.state) ? undefined : cancelJob(tables, slot, now, { reason: 'replaced' });
      if (replaced !== undefined) outcome.replaced = replaced;
    }
    insert(job, i);
    return outcome;
  });
}
