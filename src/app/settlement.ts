import { assertField, jobNotFound, leaseNotHeld, OjsError } from '../domain/errors';
import { decideFailure, type FailureOutcome } from '../domain/failure';
import { jobIdProblem, leaseTokenProblem, workerIdProblem } from '../domain/identifiers';
import type { Job } from '../domain/job';
import { SETTLE_CHUNK } from '../domain/limits';
import { leaseProblem } from '../domain/lease';
import { checkProgressUpdate, type ProgressInput } from '../domain/progress';
import {
  assertSettleBatch,
  checkCompletion,
  checkFailure,
  type Completion,
  type CompletionInput,
  type FailureInput,
  type FailureItem,
} from '../domain/settlement-checks';
import type { SettlementOutcome } from '../store/job-store';
import type { JobTransition } from '../domain/transition';
import type { Principal } from '../domain/principal';
import type { AppContext } from './app-context';
import type { WorkerOwners } from './worker-owners';

/**
 * ACK and FAIL, single or batched. Each item stands alone: one stale lease
 * or bad field does not spoil the rest of a batch. Large batches reach the
 * store in chunks, so no store operation grows with what a client sends.
 * Only the worker's owner may settle for it: anyone else gets NOT_FOUND for
 * the worker, as for an unknown id (checked from remembered owners, so
 * that settling costs no extra store round trip).
 */
export class Settlement {
  constructor(
    private readonly ctx: AppContext,
    private readonly owners: WorkerOwners,
  ) {}

  async ack(caller: Principal, workerId: string, inputs: readonly CompletionInput[]): Promise<SettlementOutcome[]> {
    assertField('worker_id', workerIdProblem(workerId));
    assertSettleBatch('completions', inputs.length);
    const checked = inputs.map((input) => checkCompletion(input, this.ctx.limits));
    return this.applyChecked(caller, workerId, checked, async (completions: Completion[]) => {
      const settled = await this.ctx.store.ack({ workerId, items: completions, now: this.ctx.clock.now() });
      this.record(settled);
      return settled;
    });
  }

  /**
   * Reads the jobs, lets the domain decide each outcome from the job's
   * attempt and policy, then applies the decisions; the store re-checks the
   * lease, so a decision is never applied to a different attempt.
   */
  async fail(caller: Principal, workerId: string, inputs: readonly FailureInput[]): Promise<SettlementOutcome[]> {
    assertField('worker_id', workerIdProblem(workerId));
    assertSettleBatch('failures', inputs.length);
    return this.applyChecked(caller, workerId, inputs.map(checkFailure), (failures) => this.failChecked(workerId, failures));
  }

  /**
   * Records progress and a checkpoint for a held job (ojs-progress); it
   * counts as a beat for the job. Updates for jobs the worker does not hold
   * are ignored, not refused.
   */
  async reportProgress(
    caller: Principal,
    workerId: string,
    jobId: string,
    leaseToken: string,
    input: ProgressInput,
  ): Promise<{ applied: boolean; leaseExpiresAt?: number }> {
    assertLease(workerId, jobId, leaseToken);
    const checked = checkProgressUpdate(input);
    await this.owners.assertOwner(caller, workerId);
    return this.ctx.store.recordProgress({ workerId, jobId, leaseToken, ...checked, now: this.ctx.clock.now() });
  }

  async extendLease(caller: Principal, workerId: string, jobId: string, leaseToken: string): Promise<number> {
    assertLease(workerId, jobId, leaseToken);
    await this.owners.assertOwner(caller, workerId);
    return this.ctx.store.extendLease({ workerId, jobId, leaseToken, now: this.ctx.clock.now() });
  }

  /**
   * Applies the items that passed their checks, chunk by chunk, and puts
   * every outcome (a refusal for the items that did not) back in request
   * order. The caller must own the worker once any item is to reach the
   * store; bad items are answered as they would be for any worker.
   */
  private async applyChecked<T>(
    caller: Principal,
    workerId: string,
    checked: readonly (T | OjsError)[],
    apply: (items: T[]) => Promise<SettlementOutcome[]>,
  ): Promise<SettlementOutcome[]> {
    const outcomes: SettlementOutcome[] = [];
    const valid: { index: number; item: T }[] = [];
    checked.forEach((item, index) => {
      if (item instanceof OjsError) outcomes[index] = { ok: false, error: item };
      else valid.push({ index, item });
    });
    if (valid.length > 0) await this.owners.assertOwner(caller, workerId);
    for (let start = 0; start < valid.length; start += SETTLE_CHUNK) {
      const chunk = valid.slice(start, start + SETTLE_CHUNK);
      const applied = await apply(chunk.map(({ item }) => item));
      chunk.forEach(({ index }, i) => {
        outcomes[index] = applied[i]!;
      });
    }
    return outcomes;
  }

  private async failChecked(workerId: string, failures: readonly FailureItem[]): Promise<SettlementOutcome[]> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const jobs = await ctx.store.getJobs(failures.map((f) => f.jobId));
    const outcomes: SettlementOutcome[] = [];
    const decided: { index: number; job: Job; jobId: string; leaseToken: string; outcome: FailureOutcome }[] = [];
    failures.forEach((failure, index) => {
      const job = jobs[index];
      const problem = job === undefined ? undefined : leaseProblem(job, workerId, failure.leaseToken);
      if (job === undefined) outcomes[index] = { ok: false, error: jobNotFound(failure.jobId) };
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
    this.record(outcomes);
    return outcomes;
  }

  private record(outcomes: readonly SettlementOutcome[]): void {
    if (outcomes.some((outcome) => outcome.ok)) this.ctx.telemetry.jobTransitions(settledTransitions(outcomes));
  }
}

/** The transitions of the settled items, read one by one as telemetry asks: a store may build each only when read. */
function* settledTransitions(outcomes: readonly SettlementOutcome[]): Generator<JobTransition> {
  for (const outcome of outcomes) if (outcome.ok) yield outcome.transition;
}

/** The ids of a call about one held job. */
function assertLease(workerId: string, jobId: string, leaseToken: string): void {
  assertField('worker_id', workerIdProblem(workerId));
  assertField('job_id', jobIdProblem(jobId));
  assertField('lease_token', leaseTokenProblem(leaseToken));
}
