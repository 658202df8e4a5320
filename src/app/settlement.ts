import { invalidRequest, jobNotFound, leaseNotHeld } from '../domain/errors';
import { decideFailure, type FailureOutcome } from '../domain/failure';
import type { Job } from '../domain/job';
import type { JsonValue } from '../domain/json';
import type { FailureReport } from '../domain/job-error';
import { leaseProblem } from '../domain/lease';
import { checkProgressUpdate, type ProgressUpdate } from '../domain/progress';
import type { SettlementOutcome } from '../store/job-store';
import { requireField } from './require-field';
import type { AppContext } from './app-context';
import { TimeoutEvents } from './timeout-events';

export interface Completion {
  jobId: string;
  leaseToken: string;
  result?: JsonValue;
}

export interface FailureItem {
  jobId: string;
  leaseToken: string;
  report: FailureReport;
}

/**
 * ACK and FAIL, single or batched. Each item stands alone: one stale lease
 * does not spoil the rest of a batch.
 */
export class Settlement {
  private readonly events: TimeoutEvents;

  constructor(private readonly ctx: AppContext) {
    this.events = new TimeoutEvents(ctx);
  }

  async ack(workerId: string, completions: readonly Completion[]): Promise<SettlementOutcome[]> {
    requireField('worker_id', workerId);
    const outcomes = await this.ctx.store.ack({ workerId, items: completions, now: this.ctx.clock.now() });
    this.record(outcomes);
    return outcomes;
  }

  /**
   * Reads the jobs, lets the domain decide each outcome from the job's
   * attempt and policy, then applies the decisions; the store re-checks the
   * lease, so a decision is never applied to a different attempt.
   */
  async fail(workerId: string, failures: readonly FailureItem[]): Promise<SettlementOutcome[]> {
    requireField('worker_id', workerId);
    const { ctx } = this;
    const now = ctx.clock.now();
    const jobs = await ctx.store.getJobs(failures.map((f) => f.jobId));
    const outcomes: (SettlementOutcome | undefined)[] = [];
    const decided: { index: number; job: Job; jobId: string; leaseToken: string; outcome: FailureOutcome }[] = [];
    failures.forEach((failure, index) => {
      const job = jobs[index];
      const problem = job === undefined ? undefined : leaseProblem(job, workerId, failure.leaseToken);
      if (failure.report.type.length === 0) outcomes[index] = { ok: false, error: invalidRequest('error.type', 'is required') };
      else if (job === undefined) outcomes[index] = { ok: false, error: jobNotFound(failure.jobId) };
      else if (problem !== undefined) outcomes[index] = { ok: false, error: leaseNotHeld(job.id, problem, job.state) };
      else {
        const outcome = decideFailure(job, failure.report, { now, random: () => ctx.entropy.random() });
        decided.push({ index, job, jobId: job.id, leaseToken: failure.leaseToken, outcome });
      }
    });
    if (decided.length > 0) {
      const applied = await ctx.store.fail({ workerId, items: decided, now });
      applied.forEach((outcome, i) => {
        outcomes[decided[i]!.index] = outcome;
      });
    }
    const all = failures.map((failure, index) => {
      const outcome = outcomes[index];
      // Each item got an outcome above: a refusal, or the store's answer to its decision.
      if (outcome === undefined) throw new Error(`no settlement outcome for job ${failure.jobId}`);
      return outcome;
    });
    this.record(all);
    // A worker-side timeout, or a retry that could not end within the total timeout (timeouts.md 9.1).
    await this.events.emit(
      decided.map(({ job, outcome }) => ({ job, error: outcome.error, workerId })),
      all.flatMap((o) => (o.ok ? [o.transition] : [])),
    );
    return all;
  }

  /**
   * Records progress and a checkpoint for a held job (ojs-progress); it
   * counts as a beat for the job. Updates for jobs the worker does not hold
   * are ignored, not refused.
   */
  async reportProgress(
    workerId: string,
    jobId: string,
    leaseToken: string,
    update: ProgressUpdate,
  ): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    requireField('worker_id', workerId);
    requireField('job_id', jobId);
    const checked = checkProgressUpdate(update);
    return this.ctx.store.recordProgress({ workerId, jobId, leaseToken, ...checked, now: this.ctx.clock.now() });
  }

  async extendLease(workerId: string, jobId: string, leaseToken: string): Promise<number> {
    requireField('worker_id', workerId);
    return this.ctx.store.extendLease({ workerId, jobId, leaseToken, now: this.ctx.clock.now() });
  }

  private record(outcomes: readonly SettlementOutcome[]): void {
    const transitions = [];
    for (const outcome of outcomes) if (outcome.ok) transitions.push(outcome.transition);
    if (transitions.length > 0) this.ctx.telemetry.jobTransitions(transitions);
  }
}
