import { decideFailure, type FailureOutcome } from '../domain/failure';
import type { Job } from '../domain/job';
import { appendError, SERVER_ERROR_TYPES, stampError } from '../domain/job-error';
import { activeExpiryCause, activeExpiryReport, waitingExpiryReport } from '../domain/timeouts';
import type { WorkerSnapshot } from '../store/job-store';
import type { AppContext } from './app-context';
import { watchDueTimes } from './due-announcements';
import type { HeartbeatAge } from './ports';

/** How many jobs or workers one background pass handles at most. */
const RECOVERY_BATCH = 500;
const PRUNE_BATCH = 5_000;
const PRUNE_BATCHES_PER_PASS = 20;
/** Most active jobs the heartbeat-age gauge looks at per collection. */
const HEARTBEAT_SAMPLE = 10_000;

/**
 * The server-side safety nets: promoting jobs whose time has come, discarding
 * jobs that waited too long, telling workers that a job's time is up,
 * reclaiming active jobs whose lease lapsed, and recovering the jobs of
 * workers that died or left. Timeout enforcement never relies on the worker
 * (timeouts.md 4.3). Each pass is idempotent and safe to run on every
 * replica at once: the store only applies a change to the state or lease it
 * was decided for.
 */
export class Recovery {
  constructor(private readonly ctx: AppContext) {}

  /** Calls `listener` with each time a job comes to fall due before every other one (watchDueTimes); returns the unsubscribe. */
  watchDue(listener: (at: number) => void): () => void {
    return watchDueTimes(this.ctx, 'dueAt', listener);
  }

  /** scheduled and retryable jobs whose time has come become available; returns when the next one falls due. */
  async promoteDue(): Promise<{ promoted: number; nextDueAt: number | undefined }> {
    const { transitions, nextDueAt } = await this.ctx.store.promoteDue(this.ctx.clock.now(), RECOVERY_BATCH);
    this.ctx.telemetry.jobTransitions(transitions);
    return { promoted: transitions.length, nextDueAt };
  }

  /**
   * Waiting jobs past their expires_at, enqueue TTL or total timeout are
   * discarded without running (timeouts.md 5.2, 5.3).
   */
  async expireWaiting(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const found = await ctx.store.findExpiredWaiting(now, RECOVERY_BATCH);
    if (found.length === 0) return 0;
    const items = found.map((job) => {
      const error = stampError(waitingExpiryReport(job, now), job.attempt, now);
      return { jobId: job.id, expectedState: job.state, error, errors: appendError(job.errors, error) };
    });
    const transitions = await ctx.store.discardWaiting({ items, now });
    ctx.telemetry.jobTransitions(transitions);
    return transitions.length;
  }

  /**
   * Tells the workers of active jobs whose execution (or total) timeout
   * passed to stop them: the soft timeout of timeouts.md 5.4. The server
   * reclaims them when the grace period ends, whatever the worker does.
   */
  async signalSoftTimeouts(): Promise<number> {
    const due = await this.ctx.store.takeDueSoftTimeouts(this.ctx.clock.now(), RECOVERY_BATCH);
    await this.tellWorkersToStop('jobsTimedOut', due);
    return due.length;
  }

  /**
   * Active jobs whose lease lapsed: by the deadline that passed (timeouts.ts
   * activeExpiryCause), the attempt failed with `total_timeout`, `timeout`,
   * `stalled` or `visibility_timeout` and the retry policy decides the rest;
   * a job whose live worker never confirmed receiving it goes back to the
   * queue without spending an attempt.
   */
  async reclaimExpiredLeases(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const found = await ctx.store.findExpiredLeases(now, RECOVERY_BATCH);
    if (found.length === 0) return 0;
    const undelivered: Job[] = [];
    const recorded: { job: Job; leaseToken: string; outcome: FailureOutcome }[] = [];
    for (const job of found) {
      const cause = activeExpiryCause(job, now, ctx.settings.heartbeatTimeoutMs);
      if (cause === undefined) continue;
      if (cause === 'unconfirmed') {
        undelivered.push(job);
        continue;
      }
      const outcome = decideFailure(job, activeExpiryReport(job, cause, now), { now, random: () => ctx.entropy.random() });
      recorded.push({ job, leaseToken: job.lease!.token, outcome });
    }
    const released = await this.releaseUndelivered(undelivered, now);
    const items = recorded.map(({ job, leaseToken, outcome }) => ({ jobId: job.id, leaseToken, outcome, requireExpired: true }));
    const transitions = items.length === 0 ? [] : await ctx.store.recover({ items, now });
    ctx.telemetry.jobTransitions(transitions);
    if (transitions.length > 0) {
      ctx.logger.warn(
        { reclaimed: transitions.map((t) => ({ jobId: t.jobId, cause: t.error?.type, to: t.to })) },
        'reclaimed jobs whose lease lapsed',
      );
      // A worker still running a reclaimed job should stop it: its answer will be refused.
      await this.tellWorkersToStop(
        'jobsReclaimed',
        transitions.flatMap((t) => (t.workerId === undefined ? [] : [{ jobId: t.jobId, workerId: t.workerId }])),
      );
    }
    return released + transitions.length;
  }

  /** Removes recorded events older than the event retention (their count is bounded as they are recorded). */
  async pruneEvents(): Promise<number> {
    return this.ctx.store.pruneFacts(this.ctx.clock.now());
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
      if ((await this.removeWorker(snapshot, 'dead')) !== undefined) removed += 1;
    }
    return removed;
  }

  /**
   * Removes a worker and returns the jobs it held to the queue at once,
   * each counting as a failed attempt (`worker_death` for a dead worker,
   * `shutdown` for one that deregistered while holding jobs). Returns the
   * ids of the jobs recovered, or undefined if the worker changed meanwhile
   * (it beat, or took another job).
   */
  async removeWorker(snapshot: WorkerSnapshot, reason: 'dead' | 'deregistered'): Promise<string[] | undefined> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const { worker } = snapshot;
    const report =
      reason === 'dead'
        ? { type: SERVER_ERROR_TYPES.workerDeath, message: `worker ${worker.workerId} stopped sending heartbeats` }
        : { type: SERVER_ERROR_TYPES.shutdown, message: `worker ${worker.workerId} deregistered while holding the job` };
    const held = await ctx.store.getJobs(snapshot.heldJobIds);
    const recorded = held.flatMap((job) =>
      job?.lease?.workerId !== worker.workerId
        ? []
        : [
            {
              job,
              leaseToken: job.lease.token,
              outcome: decideFailure(job, report, { now, random: () => ctx.entropy.random(), requeueAtOnce: true }),
            },
          ],
    );
    const removal = await ctx.store.removeWorker({
      workerId: worker.workerId,
      reason,
      ...(reason === 'dead' ? { ifLastBeatAt: worker.lastBeatAt } : {}),
      recoveries: recorded.map(({ job, leaseToken, outcome }) => ({ jobId: job.id, leaseToken, outcome })),
      now,
    });
    if (!removal.removed) return undefined;
    ctx.telemetry.jobTransitions(removal.transitions);
    ctx.telemetry.workerTransition({ workerId: worker.workerId, from: worker.state, to: 'terminated', reason });
    const log = { workerId: worker.workerId, recoveredJobIds: removal.transitions.map((t) => t.jobId) };
    if (reason === 'dead') ctx.logger.warn(log, 'worker declared dead; its jobs were recovered');
    else ctx.logger.info(log, 'worker deregistered');
    return removal.transitions.map((t) => t.jobId);
  }

  /** For the heartbeat-age gauge: per queue, how long ago its stalest active job showed signs of life. */
  async heartbeatAges(): Promise<HeartbeatAge[]> {
    const now = this.ctx.clock.now();
    const oldest = new Map<string, number>();
    for (const { queue, renewedAt } of await this.ctx.store.listActiveHeartbeats(HEARTBEAT_SAMPLE)) {
      oldest.set(queue, Math.min(oldest.get(queue) ?? Infinity, renewedAt));
    }
    return [...oldest].map(([queue, renewedAt]) => ({ queue, ageMs: Math.max(0, now - renewedAt) }));
  }

  private async releaseUndelivered(jobs: readonly Job[], now: number): Promise<number> {
    if (jobs.length === 0) return 0;
    const released = await this.ctx.store.releaseUndelivered({
      leases: jobs.map((job) => ({ jobId: job.id, leaseToken: job.lease!.token })),
      now,
      requireUnconfirmedLapse: true,
    });
    this.ctx.telemetry.jobTransitions(released);
    if (released.length > 0) {
      this.ctx.logger.warn(
        { jobIds: released.map((t) => t.jobId) },
        'requeued deliveries that their live worker never confirmed receiving',
      );
    }
    return released.length;
  }

  /** Publishes, per worker, the jobs it should stop (pushed on its Beat stream by whichever replica holds it). */
  private async tellWorkersToStop(
    kind: 'jobsTimedOut' | 'jobsReclaimed',
    jobs: readonly { jobId: string; workerId: string }[],
  ): Promise<void> {
    const byWorker = new Map<string, string[]>();
    for (const { jobId, workerId } of jobs) byWorker.set(workerId, [...(byWorker.get(workerId) ?? []), jobId]);
    for (const [workerId, jobIds] of byWorker) await this.ctx.store.publish({ kind, workerId, jobIds });
  }
}
