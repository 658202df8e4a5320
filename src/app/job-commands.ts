import { assertField } from '../domain/errors';
import { jobIdProblem } from '../domain/identifiers';
import type { Job } from '../domain/job';
import { buildJobs, type JobSubmission } from '../domain/job-submission';
import type { Principal } from '../domain/principal';
import { transitionOf } from '../domain/transition';
import type { EnqueueOutcome, StateChange } from '../store/job-store';
import type { AppContext } from './app-context';
import { assertMayUseQueue, isUnscoped, visibleJob } from './caller-scope';
import { jobCreation } from './job-creation';

/** W3C trace context of the call that enqueues, stored in meta (ojs-distributed-tracing 6.1). */
export interface TraceContext {
  traceparent?: string;
  tracestate?: string;
}

/**
 * The producer and operator operations on jobs: PUSH, INFO, CANCEL, ACTIVATE,
 * RETRY. A queue-scoped caller enqueues only into its queues, and a job of
 * another queue is NOT_FOUND to it, as a job that does not exist is.
 */
export class JobCommands {
  constructor(private readonly ctx: AppContext) {}

  /**
   * Validates and stores a batch atomically; returns, per job, the stored
   * envelope or the existing one its unique policy returned in its place.
   */
  async enqueue(
    caller: Principal,
    submissions: readonly JobSubmission[],
    options: { pending: boolean; trace?: TraceContext },
  ): Promise<EnqueueOutcome[]> {
    const { ctx } = this;
    const jobs = buildJobs(
      withTraceContext(withTenantUniqueness(caller, submissions), options.trace),
      jobCreation(ctx, ctx.clock.now(), { pending: options.pending }),
    );
    jobs.forEach((job, i) => assertMayUseQueue(caller, `jobs[${i}].queue`, job.queue));
    const outcomes = await ctx.store.enqueue(jobs);
    ctx.telemetry.jobTransitions(
      outcomes.flatMap(({ job, deduplicated, replaced }) => {
        if (deduplicated) return [];
        const created = transitionOf(job, 'none', job.createdAt);
        return replaced === undefined ? [created] : [replaced, created];
      }),
    );
    return outcomes;
  }

  async get(caller: Principal, jobId: string): Promise<Job> {
    assertField('job_id', jobIdProblem(jobId));
    return visibleJob(caller, jobId, await this.ctx.store.getJob(jobId));
  }

  async cancel(caller: Principal, jobId: string): Promise<Job> {
    await this.assertVisible(caller, jobId);
    return this.record(await this.ctx.store.cancel(jobId, this.ctx.clock.now()));
  }

  async activate(caller: Principal, jobId: string): Promise<Job> {
    await this.assertVisible(caller, jobId);
    return this.record(await this.ctx.store.activate(jobId, this.ctx.clock.now()));
  }

  async retry(caller: Principal, jobId: string): Promise<Job> {
    await this.assertVisible(caller, jobId);
    return this.record(await this.ctx.store.retry(jobId, this.ctx.clock.now()));
  }

  /**
   * Checks the id, and that a queue-scoped caller may see the job (a job
   * never changes queue, so the read cannot go stale); an unscoped caller
   * costs no read.
   */
  private async assertVisible(caller: Principal, jobId: string): Promise<void> {
    assertField('job_id', jobIdProblem(jobId));
    if (!isUnscoped(caller)) visibleJob(caller, jobId, await this.ctx.store.getJob(jobId));
  }

  private record(change: StateChange): Job {
    if (change.from !== change.job.state) {
      this.ctx.telemetry.jobTransitions([transitionOf(change.job, change.from, this.ctx.clock.now(), change.workerId)]);
    }
    return change.job;
  }
}

/**
 * A queue-scoped caller's unique keys always include the queue: otherwise
 * one tenant's job could reject, stand in for or replace another tenant's
 * job of the same type, and tell of its existence.
 */
function withTenantUniqueness(caller: Principal, submissions: readonly JobSubmission[]): readonly JobSubmission[] {
  if (isUnscoped(caller)) return submissions;
  return submissions.map((submission) => {
    const unique = submission.unique;
    if (unique === undefined || unique.keys?.includes('queue') === true) return submission;
    return { ...submission, unique: { ...unique, keys: [...(unique.keys ?? []), 'queue'] } };
  });
}

/**
 * Copies the caller's trace context into meta unless the producer set its
 * own traceparent. The pair travels together: a tracestate belongs to its
 * traceparent, so the producer's is replaced (or dropped) with it.
 */
function withTraceContext(submissions: readonly JobSubmission[], trace: TraceContext | undefined): readonly JobSubmission[] {
  if (trace?.traceparent === undefined) return submissions;
  return submissions.map((submission) => {
    if (submission.meta?.['traceparent'] !== undefined) return submission;
    const meta: Record<string, unknown> = { ...submission.meta, traceparent: trace.traceparent };
    if (trace.tracestate !== undefined) meta['tracestate'] = trace.tracestate;
    else delete meta['tracestate'];
    return { ...submission, meta };
  });
}
