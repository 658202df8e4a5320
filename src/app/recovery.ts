import { decideFailure } from '../domain/failure';
import { SERVER_ERROR_TYPES } from '../domain/job-error';
import { isUnconfirmedLapse } from '../domain/lease';
import type { WorkerSnapshot } from '../store/job-store';
import type { AppContext } from './app-context';

/** How many jobs or workers one background pass handles at most. */
export const RECOVERY_BATCH = 500;
const PRUNE_BATCH = 5_000;
const PRUNE_BATCHES_PER_PASS = 20;

/**
 * The server-side safety nets: promoting jobs whose time has come, reclaiming
 * jobs whose visibility timeout lapsed, and recovering the jobs of workers
 * that died or left. Each pass is idempotent and safe to run on every
 * replica at once: the store only applies a recovery to the lease it was
 * decided for.
 */
export class Recovery {
  constructor(private readonly ctx: AppContext) {}

  /** scheduled and retryable jobs whose time has come become available. */
  async promoteDue(): Promise<number> {
    const transitions = await this.ctx.store.promoteDue(this.ctx.clock.now(), RECOVERY_BATCH);
    this.ctx.telemetry.jobTransitions(transitions);
    return transitions.length;
  }

  /**
   * Active jobs past their visibility timeout count as a failed attempt of
   * type `visibility_timeout`; the retry policy decides the rest
   * (worker-protocol 5.5, ojs-retry 9.2). Jobs whose live worker never
   * confirmed receiving them go back to the queue without spending an attempt.
   */
  async reclaimExpiredLeases(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const found = await ctx.store.findExpiredLeases(now, RECOVERY_BATCH);
    if (found.length === 0) return 0;
    const undelivered = found.filter(isUnconfirmedLapse);
    const released = await ctx.store.releaseUndelivered({
      leases: undelivered.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token })),
      now,
      requireUnconfirmedLapse: true,
    });
    ctx.telemetry.jobTransitions(released);
    if (released.length > 0) {
      ctx.logger.warn({ jobIds: released.map((t) => t.jobId) }, 'requeued deliveries that their live worker never confirmed receiving');
    }
    const expired = found.filter((job) => !isUnconfirmedLapse(job));
    const items = expired.map((job) => ({
      jobId: job.id,
      leaseToken: job.lease!.token,
      requireExpired: true,
      outcome: decideFailure(
        job,
        { type: SERVER_ERROR_TYPES.visibilityTimeout, message: `visibility timeout of ${job.visibilityTimeoutMs / 1000} s expired` },
        { now, random: () => ctx.entropy.random() },
      ),
    }));
    const transitions = items.length === 0 ? [] : await ctx.store.recover({ items, now });
    ctx.telemetry.jobTransitions(transitions);
    if (transitions.length > 0) ctx.logger.warn({ jobIds: transitions.map((t) => t.jobId) }, 'reclaimed jobs whose visibility timeout expired');
    return released.length + transitions.length;
  }

  /** Removes finished jobs past their retention (drains up to a bounded number of batches). */
  async pruneTerminal(): Promise<number> {
    let pruned = 0;
    for (let batch = 0; batch < PRUNE_BATCHES_PER_PASS; batch++) {
      const count = await this.ctx.store.pruneTerminal(this.ctx.clock.now(), this.ctx.retention, PRUNE_BATCH);
      pruned += count;
      if (count < PRUNE_BATCH) break;
    }
    return pruned;
  }

  /** Workers silent for longer than the heartbeat timeout are dead (worker-protocol 10). */
  async removeDeadWorkers(): Promise<number> {
    const { ctx } = this;
    const cutoff = ctx.clock.now() - ctx.settings.heartbeatTimeoutMs;
    const silent = await ctx.store.findSilentWorkers(cutoff, RECOVERY_BATCH);
    let removed = 0;
    for (const snapshot of silent) {
      if (await this.removeWorker(snapshot, 'dead')) removed += 1;
    }
    return removed;
  }

  /**
   * Removes a worker and returns the jobs it held to the queue at once,
   * each counting as a failed attempt (`worker_death` for a dead worker,
   * `shutdown` for one that deregistered while holding jobs). Returns false
   * if the worker changed meanwhile (it beat, or took another job).
   */
  async removeWorker(snapshot: WorkerSnapshot, reason: 'dead' | 'deregistered'): Promise<boolean> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const { worker } = snapshot;
    const report =
      reason === 'dead'
        ? { type: SERVER_ERROR_TYPES.workerDeath, message: `worker ${worker.workerId} stopped sending heartbeats` }
        : { type: SERVER_ERROR_TYPES.shutdown, message: `worker ${worker.workerId} deregistered while holding the job` };
    const held = await ctx.store.getJobs(snapshot.heldJobIds);
    const recoveries = held.flatMap((job) =>
      job?.lease === undefined
        ? []
        : [{ jobId: job.id, leaseToken: job.lease.token, outcome: decideFailure(job, report, { now, random: () => ctx.entropy.random(), requeueAtOnce: true }) }],
    );
    const outcome = await ctx.store.removeWorker({
      workerId: worker.workerId,
      ...(reason === 'dead' ? { ifLastBeatAt: worker.lastBeatAt } : {}),
      recoveries,
      now,
    });
    if (!outcome.removed) return false;
    ctx.telemetry.jobTransitions(outcome.transitions);
    ctx.telemetry.workerTransition({ workerId: worker.workerId, from: worker.state, to: 'terminated', reason });
    const log = { workerId: worker.workerId, recoveredJobIds: outcome.transitions.map((t) => t.jobId) };
    if (reason === 'dead') ctx.logger.warn(log, 'worker declared dead; its jobs were recovered');
    else ctx.logger.info(log, 'worker deregistered');
    return true;
  }
}
