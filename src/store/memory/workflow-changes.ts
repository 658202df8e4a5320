import { duplicateJob, workflowNotFound, OjsError } from '../../domain/errors';
import type { JobState } from '../../domain/job';
import { isTerminal } from '../../domain/job-state-machine';
import { PARENT_RESULTS_INLINE_BYTES } from '../../domain/limits';
import { assembleParentResults } from '../../domain/parent-results';
import type { RetentionPolicy } from '../../domain/retention';
import type { JobTransition } from '../../domain/transition';
import type { NewWorkflow } from '../../domain/workflow-creation';
import { createdFact, workflowFacts, type SettledStep } from '../../domain/workflow-facts';
import { cancelWorkflow, settleNode, startWorkflow, type WorkflowAdvance } from '../../domain/workflow-run';
import { isTerminalWorkflowState, type WorkflowState } from '../../domain/workflow-state-machine';
import type { JsonObject } from '../../domain/json';
import type { StepJob } from '../../domain/workflow-view';
import type { CancelWorkflowParams, WorkflowRecord } from '../job-store';
import { cancelJob } from './job-changes';
import type { JobSlot, MemoryTables } from './memory-tables';
import type { WorkflowEnd, WorkflowSlot } from './workflow-table';

const WORKFLOW_ENDS: readonly WorkflowEnd[] = ['completed', 'failed', 'cancelled'];

/**
 * Workflows in the memory store (JobStore's WorkflowStore): creation, and
 * the advance that follows every change of a workflow job's state, made in
 * the same store call as that change (MemoryTables.transit calls
 * advanceWorkflow), so no reader sees one without the other.
 */

/** Stores a workflow and its jobs, all or none (the caller checked room for the jobs). */
export function insertWorkflow(tables: MemoryTables, workflow: NewWorkflow, sizes: readonly number[]): void {
  const { plan, jobs, run } = workflow;
  if (tables.workflows.has(plan.id)) throw new OjsError('duplicate', `workflow ${plan.id} already exists`);
  const ids = new Set<string>();
  for (const job of jobs) {
    if (tables.jobs.has(job.id) || ids.has(job.id)) throw duplicateJob(job.id);
    ids.add(job.id);
  }
  const traceparent = jobs.map((job) => job.meta['traceparent']).find((value) => typeof value === 'string');
  const slot: WorkflowSlot = { plan, run, jobIds: jobs.map((job) => job.id), results: new Map(), isApplying: false };
  if (traceparent !== undefined) slot.traceparent = traceparent;
  tables.workflows.add(slot);
  tables.record(createdFact(factContext(slot), run.progress.createdAt));
  jobs.forEach((job, i) => tables.insert(job, sizes[i] ?? 0));
}

/**
 * What a change of a workflow job's state does to its workflow: entering
 * active starts it; completed settles the job's node as succeeded (its
 * result kept by the workflow), discarded or cancelled as failed. Changes
 * the advance itself makes (enqueueing, withdrawing) advance nothing more.
 */
export function advanceWorkflow(tables: MemoryTables, slot: JobSlot, from: JobState, at: number): void {
  const link = slot.job.workflow;
  const workflow = link === undefined ? undefined : tables.workflows.get(link.id);
  if (link === undefined || workflow === undefined || workflow.isApplying) return;
  const { job } = slot;
  const { plan, run } = workflow;
  if (job.state === 'active') {
    if (run.progress.state === 'pending') apply(tables, workflow, startWorkflow(plan, run, at), at);
    return;
  }
  if (job.state !== 'completed' && job.state !== 'discarded' && job.state !== 'cancelled') return;
  const outcome = job.state === 'completed' ? 'succeeded' : 'failed';
  const advance = settleNode(plan, run, link.node, outcome, at);
  const settled: SettledStep = { node: link.node, outcome };
  if (outcome === 'succeeded' && from === 'active' && job.startedAt !== undefined) settled.durationMs = at - job.startedAt;
  if (outcome === 'succeeded' && job.result !== undefined && advance.changed.includes(link.node)) {
    const json = JSON.stringify(job.result);
    workflow.results.set(link.node, { json, bytes: Buffer.byteLength(json, 'utf8'), value: job.result });
  }
  apply(tables, workflow, advance, at, settled);
}

/** Cancels a workflow and its unsettled jobs (see WorkflowStore.cancelWorkflow). */
export function cancelWorkflowIn(
  tables: MemoryTables,
  params: CancelWorkflowParams,
): { workflow: WorkflowRecord; transitions: JobTransition[] } {
  const workflow = tables.workflows.get(params.workflowId);
  if (workflow === undefined) throw workflowNotFound(params.workflowId);
  const advance = cancelWorkflow(workflow.plan, workflow.run, params.now);
  const author = params.actor === undefined ? {} : { actor: params.actor };
  const transitions = apply(tables, workflow, advance, params.now, undefined, author);
  return { workflow: recordOf(tables, workflow), transitions };
}

export function workflowRecord(tables: MemoryTables, workflowId: string): WorkflowRecord | undefined {
  const workflow = tables.workflows.get(workflowId);
  return workflow === undefined ? undefined : recordOf(tables, workflow);
}

/** Drops ended workflows past the retention of their end state; their jobs follow their own. */
export function pruneWorkflows(tables: MemoryTables, now: number, retention: RetentionPolicy): void {
  const retentionMs: Record<WorkflowEnd, number> = {
    completed: retention.completedMs,
    failed: retention.discardedMs,
    cancelled: retention.cancelledMs,
  };
  for (const end of WORKFLOW_ENDS) {
    const heap = tables.workflows.ended[end];
    for (let entry = heap.peek(); entry !== undefined && entry.at <= now - retentionMs[end]; entry = heap.peek()) {
      heap.pop();
      tables.workflows.delete(entry.id);
    }
  }
}

/**
 * Applies an advance: records its facts, makes the enqueued nodes' jobs
 * available with their parent_results, cancels the withdrawn nodes' jobs
 * (telling the workers of active ones). Returns the jobs' transitions.
 */
function apply(
  tables: MemoryTables,
  workflow: WorkflowSlot,
  advance: WorkflowAdvance,
  at: number,
  settled?: SettledStep,
  author: { actor?: string } = {},
): JobTransition[] {
  workflow.run = advance.run;
  for (const fact of workflowFacts(factContext(workflow), advance, at, settled)) tables.record(fact);
  const transitions: JobTransition[] = [];
  workflow.isApplying = true;
  try {
    for (const node of advance.enqueue) {
      const slot = tables.jobs.get(workflow.jobIds[node] ?? '');
      if (slot?.job.state !== 'pending') continue;
      const text = assembleParentResults(workflow.plan, node, (source) => workflow.results.get(source), PARENT_RESULTS_INLINE_BYTES);
      const parentResults: unknown = JSON.parse(text);
      if (!isJsonObject(parentResults)) throw new Error(`workflow ${workflow.plan.id} assembled parent_results that are no object`);
      transitions.push(tables.transit(slot, { state: 'available', enqueuedAt: at, parentResults }, at, { reason: 'workflow' }));
    }
    for (const node of advance.withdrawn) {
      const slot = tables.jobs.get(workflow.jobIds[node] ?? '');
      if (slot === undefined || isTerminal(slot.job.state)) continue;
      const cancelled = cancelJob(tables, slot, at, { ...author, reason: 'workflow' });
      if (cancelled !== undefined) transitions.push(cancelled);
    }
  } finally {
    workflow.isApplying = false;
  }
  const { completedAt, state } = workflow.run.progress;
  if (completedAt !== undefined && isWorkflowEnd(state) && advance.transitions.length > 0) {
    tables.workflows.ended[state].push({ at: completedAt, id: workflow.plan.id });
  }
  return transitions;
}

function recordOf(tables: MemoryTables, workflow: WorkflowSlot): WorkflowRecord {
  const jobs = workflow.jobIds.map((id, node): StepJob | undefined => {
    const job = tables.jobs.get(id)?.job;
    if (job === undefined) return undefined;
    const step: StepJob = { id, queue: job.queue, state: job.state, attempt: job.attempt };
    if (job.startedAt !== undefined) step.startedAt = job.startedAt;
    if (job.completedAt !== undefined) step.completedAt = job.completedAt;
    const result = workflow.results.get(node);
    if (result !== undefined) step.result = result.value;
    return step;
  });
  return { plan: workflow.plan, run: workflow.run, jobIds: [...workflow.jobIds], jobs };
}

function isWorkflowEnd(state: WorkflowState): state is WorkflowEnd {
  return isTerminalWorkflowState(state);
}

/** Parent results are assembled from JSON texts of JSON values: an object of them. */
function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function factContext(workflow: WorkflowSlot): { plan: WorkflowSlot['plan']; jobIds: string[]; traceparent?: string } {
  return workflow.traceparent === undefined
    ? { plan: workflow.plan, jobIds: workflow.jobIds }
    : { plan: workflow.plan, jobIds: workflow.jobIds, traceparent: workflow.traceparent };
}
