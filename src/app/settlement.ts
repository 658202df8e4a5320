import { invalidRequest, jobNotFound, leaseNotHeld } from '../domain/errors';
import { decideFailure, type FailureOutcome } from '../domain/failure';
import type { JsonValue } from '../domain/json';
import type { FailureReport } from '../domain/job-error';
import { leaseProblem } from '../domain/lease';
import type { SettlementOutcome } from '../store/job-store';
import { requireField } from './require-field';
import type { AppContext } from './app-context';

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
  constructor(private readonly ctx: AppContext) {}

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
    const decided: { index: number; jobId: string; leaseToken: string; outcome: FailureOutcome }[] = [];
    failures.forEach((failure, index) => {
      const job = jobs[index];
      const problem = job === undefined ? undefined : leaseProblem(job, workerId, failure.leaseToken);
      if (failure.report.type.length === 0) outcomes[index] = { ok: false, error: invalidRequest('error.type', 'is required') };
      else if (job === undefined) outcomes[index] = { ok: false, error: jobNotFound(failure.jobId) };
      else if (problem !== undefined) outcomes[index] = { ok: false, error: leaseNotHeld(job.id, problem, job.state) };
      else {
        const outcome = decideFailure(job, failure.report, { now, random: () => ctx.entropy.random() });
        decided.push({ index, jobId: job.id, leaseToken: failure.leaseToken, outcome });
      }
    });
    if (decided.length > 0) {
      const applied = await ctx.store.fail({ workerId, items: decided, now });
      applied.forEach((outcome, i) => {
        outcomes[decided[i]!.index] = outcome;
      });
    }
    const all = outcomes as SettlementOutcome[];
    this.record(all);
    return all;
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
