import { invalidRequest, jobNotFound } from '../domain/errors';
import { jobIdProblem } from '../domain/identifiers';
import { JOB_STATES, type JobState } from '../domain/job';
import { checkJobFilter, JOB_SCAN_BUDGET, type JobFilterInput } from '../domain/job-query';
import { isTerminal } from '../domain/job-state-machine';
import { DELIVERY_BUDGET_BYTES } from '../domain/limits';
import { mayUseQueue, type Principal } from '../domain/principal';
import type { JobTransition } from '../domain/transition';
import type { BulkChangeParams, BulkOutcome } from '../store/job-store';
import type { AppContext } from './app-context';
import { isUnscoped, scopedFilterQueue } from './caller-scope';

export type BulkOperation = 'cancel' | 'retry' | 'delete';

/** The jobs a bulk operation acts on: by id, or a page of what a filter selects (ojs-bulk-operations 6-8). */
export type JobSelection =
  { kind: 'ids'; ids: readonly string[] } | { kind: 'filter'; filter: JobFilterInput; limit: number; after?: string };

export interface BulkRequest {
  operation: BulkOperation;
  selection: JobSelection;
  /** Count what would be tried, change nothing. */
  dryRun: boolean;
  reason?: string;
  actor?: string;
}

export interface BulkResult {
  /** One per job (none for a dry run), in request or listing order. */
  items: { jobId: string; outcome: BulkOutcome }[];
  matched: number;
  succeeded: number;
  failed: number;
  /** With a filter: where the next call continues; absent when nothing more matches. */
  nextAfter?: string;
}

/** Most jobs one bulk call acts on (ojs-bulk-operations 9.1 asks for at least 1,000). */
export const MAX_BULK_JOBS = 1_000;

/** The longest cancel reason kept in job.cancelled. */
const MAX_REASON_CHARS = 500;

/** The states each operation applies to, and what a filter without states means for it. */
const STATES: Readonly<Record<BulkOperation, { allowed: readonly JobState[]; byDefault: readonly JobState[] }>> = {
  // ojs-bulk-operations 6.1: a filter cancels waiting jobs unless it names active ones.
  cancel: { allowed: JOB_STATES.filter((s) => !isTerminal(s)), byDefault: ['scheduled', 'available', 'pending', 'retryable'] },
  retry: { allowed: ['discarded', 'retryable'], byDefault: ['discarded'] },
  delete: { allowed: ['completed', 'cancelled', 'discarded'], byDefault: ['completed', 'cancelled', 'discarded'] },
};

/**
 * Cancel, retry and delete many jobs at once, by ids or by filter, with one
 * result per job, a cap per call, and a dry run that only counts. Each job
 * is checked and changed on its own (partial atomicity, ojs-bulk-operations 4).
 * A queue-scoped caller's filter selects within one of its queues, and a job
 * of another queue named by id is NOT_FOUND to it, as a missing job is.
 */
export class BulkChanges {
  constructor(private readonly ctx: AppContext) {}

  async apply(caller: Principal, request: BulkRequest): Promise<BulkResult> {
    if (request.reason !== undefined && request.reason.length > MAX_REASON_CHARS) {
      throw invalidRequest('reason', `must be at most ${MAX_REASON_CHARS} characters`);
    }
    const { ids, nextAfter } = await this.select(caller, request.operation, request.selection);
    const found: BulkResult = { items: [], matched: ids.length, succeeded: 0, failed: 0 };
    if (nextAfter !== undefined) found.nextAfter = nextAfter;
    if (request.dryRun) return { ...found, succeeded: ids.length };
    const hidden = await this.hiddenFrom(caller, request.selection, ids);
    const valid = ids.filter((id) => jobIdProblem(id) === undefined && !hidden.has(id));
    const applied = valid.length === 0 ? [] : await this.change(request, valid);
    const byId = new Map<string, BulkOutcome[]>();
    valid.forEach((id, i) => byId.set(id, [...(byId.get(id) ?? []), applied[i]!]));
    for (const jobId of ids) {
      const problem = jobIdProblem(jobId);
      const outcome: BulkOutcome =
        problem !== undefined
          ? { ok: false, error: invalidRequest('job_id', problem) }
          : hidden.has(jobId)
            ? { ok: false, error: jobNotFound(jobId) }
            : byId.get(jobId)!.shift()!;
      found.items.push({ jobId, outcome });
      if (outcome.ok) found.succeeded += 1;
      else found.failed += 1;
    }
    const transitions = applied.flatMap((o): JobTransition[] => (o.ok && o.transition !== undefined ? [o.transition] : []));
    if (transitions.length > 0) this.ctx.telemetry.jobTransitions(transitions);
    this.ctx.logger.info(
      { operation: request.operation, actor: request.actor, matched: found.matched, succeeded: found.succeeded },
      'bulk change',
    );
    return found;
  }

  /**
   * The ids (of a selection by ids) of jobs in queues a queue-scoped caller
   * may not use: one read, only for such a caller; a filter already
   * selected within its queue.
   */
  private async hiddenFrom(caller: Principal, selection: JobSelection, ids: readonly string[]): Promise<ReadonlySet<string>> {
    if (isUnscoped(caller) || selection.kind === 'filter') return new Set();
    const named = ids.filter((id) => jobIdProblem(id) === undefined);
    const jobs = named.length === 0 ? [] : await this.ctx.store.getJobs(named);
    return new Set(named.filter((id, i) => jobs[i] !== undefined && !mayUseQueue(caller, jobs[i].queue)));
  }

  private async select(
    caller: Principal,
    operation: BulkOperation,
    selection: JobSelection,
  ): Promise<{ ids: readonly string[]; nextAfter?: string }> {
    if (selection.kind === 'ids') {
      if (selection.ids.length === 0) throw invalidRequest('selection.job_ids.ids', 'at least one job id is required');
      if (selection.ids.length > MAX_BULK_JOBS) throw invalidRequest('selection.job_ids.ids', `at most ${MAX_BULK_JOBS} jobs per call`);
      return { ids: selection.ids };
    }
    if (!Number.isInteger(selection.limit) || selection.limit < 0 || selection.limit > MAX_BULK_JOBS) {
      throw invalidRequest('selection.limit', `must be from 0 (meaning ${MAX_BULK_JOBS}) to ${MAX_BULK_JOBS}`);
    }
    const states = selection.filter.states.length === 0 ? STATES[operation].byDefault : selection.filter.states;
    const refused = states.find((state) => !STATES[operation].allowed.includes(state));
    if (refused !== undefined) {
      throw invalidRequest(
        'selection.filter.states',
        `${operation} applies to ${STATES[operation].allowed.join(', ')} jobs, not ${refused}`,
      );
    }
    const queue = scopedFilterQueue(caller, 'selection.filter.queue', selection.filter.queue);
    const page = await this.ctx.store.findJobIds({
      filter: checkJobFilter({ ...selection.filter, queue, states }, 'selection.filter'),
      order: 'oldest',
      limit: selection.limit === 0 ? MAX_BULK_JOBS : selection.limit,
      maxBytes: DELIVERY_BUDGET_BYTES,
      scanBudget: JOB_SCAN_BUDGET,
      ...(selection.after === undefined ? {} : { after: selection.after }),
    });
    return page.nextAfter === undefined ? { ids: page.items } : { ids: page.items, nextAfter: page.nextAfter };
  }

  private change(request: BulkRequest, jobIds: readonly string[]): Promise<BulkOutcome[]> {
    const params: BulkChangeParams = { jobIds, now: this.ctx.clock.now() };
    if (request.actor !== undefined) params.actor = request.actor;
    if (request.reason !== undefined && request.reason !== '') params.reason = request.reason;
    switch (request.operation) {
      case 'cancel':
        return this.ctx.store.cancelJobs(params);
      case 'retry':
        return this.ctx.store.retryJobs(params);
      case 'delete':
        return this.ctx.store.deleteJobs(params);
    }
  }
}
