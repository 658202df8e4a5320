import { assertField, workflowNotFound } from '../domain/errors';
import { jobIdProblem } from '../domain/identifiers';
import { mayUseQueue, type Principal } from '../domain/principal';
import { transitionOf } from '../domain/transition';
import { createWorkflow } from '../domain/workflow-creation';
import type { WorkflowDefinition } from '../domain/workflow-definition';
import { workflowView, type WorkflowView } from '../domain/workflow-view';
import type { WorkflowRecord } from '../store/job-store';
import type { AppContext } from './app-context';
import { assertMayUseQueue } from './caller-scope';
import type { TraceContext } from './job-commands';
import { jobCreation } from './job-creation';

/**
 * Workflows (ojs-workflows 11): create, get and cancel. The store advances
 * them as their jobs settle. A queue-scoped caller creates workflows only of
 * jobs in its queues, and sees only those: a workflow with a job elsewhere
 * is NOT_FOUND to it, as one that does not exist is.
 */
export class Workflows {
  constructor(private readonly ctx: AppContext) {}

  /**
   * Validates a workflow whole (nothing is stored when anything is wrong)
   * and stores it with its jobs in one store operation. Every job carries
   * the workflow's trace context, so the workflow is one trace.
   */
  async create(caller: Principal, definition: WorkflowDefinition, trace?: TraceContext): Promise<WorkflowView> {
    const { ctx } = this;
    const created = createWorkflow(definition, jobCreation(ctx, ctx.clock.now()));
    created.jobs.forEach((job, i) => assertMayUseQueue(caller, `${created.plan.nodes[i]?.path ?? ''}.queue`, job.queue));
    const traceparent = ctx.telemetry.workflowCreated(created.plan, trace?.traceparent);
    const jobs = created.jobs.map((job) => {
      if (traceparent === undefined || job.meta['traceparent'] !== undefined) return job;
      // A tracestate belongs to the traceparent it came with.
      const { tracestate: _dropped, ...meta } = job.meta;
      return { ...job, meta: { ...meta, traceparent } };
    });
    await ctx.store.createWorkflow({ ...created, jobs });
    ctx.telemetry.jobTransitions(jobs.map((job) => transitionOf(job, 'none', job.createdAt)));
    return workflowView(created.plan, created.run, (i) => {
      const job = jobs[i];
      return job === undefined ? undefined : { id: job.id, queue: job.queue, state: job.state, attempt: job.attempt };
    });
  }

  async get(caller: Principal, workflowId: string): Promise<WorkflowView> {
    return viewOf(this.visible(caller, workflowId, await this.read(workflowId)));
  }

  /** Cancels the workflow and its unsettled jobs; a finished one is FAILED_PRECONDITION (ojs-workflows 11.3: 409). */
  async cancel(caller: Principal, workflowId: string): Promise<WorkflowView> {
    this.visible(caller, workflowId, await this.read(workflowId));
    const { workflow, transitions } = await this.ctx.store.cancelWorkflow({
      workflowId,
      now: this.ctx.clock.now(),
      ...(caller.name === undefined ? {} : { actor: caller.name }),
    });
    this.ctx.telemetry.jobTransitions(transitions);
    return viewOf(workflow);
  }

  private async read(workflowId: string): Promise<WorkflowRecord | undefined> {
    assertField('workflow_id', jobIdProblem(workflowId));
    return this.ctx.store.getWorkflow(workflowId);
  }

  private visible(caller: Principal, workflowId: string, record: WorkflowRecord | undefined): WorkflowRecord {
    if (record === undefined) throw workflowNotFound(workflowId);
    if (caller.queues !== undefined && !record.jobs.every((job) => job === undefined || mayUseQueue(caller, job.queue))) {
      throw workflowNotFound(workflowId);
    }
    return record;
  }
}

function viewOf(record: WorkflowRecord): WorkflowView {
  return workflowView(record.plan, record.run, (i) => record.jobs[i]);
}
