import type { WorkflowType } from './workflow-definition';
import type { NodeOutcome, WorkflowAdvance, WorkflowProgress } from './workflow-run';
import type { WorkflowPlan } from './workflow-plan';

/**
 * What a workflow's events (ojs-events 3.5, ojs-workflows appendix B) are
 * recorded from: created, started, a step's job completed or failed for
 * good, and the three ends.
 */
export type WorkflowChange = 'created' | 'started' | 'step_completed' | 'step_failed' | 'completed' | 'failed' | 'cancelled';

export interface WorkflowFact {
  kind: 'workflow';
  at: number;
  workflowId: string;
  workflowType: WorkflowType;
  /** "" when the workflow has none. */
  name: string;
  change: WorkflowChange;
  /** The workflow's jobs (total_steps). */
  jobCount: number;
  /** A step's change: the step's key, job type and job. */
  step?: string;
  stepType?: string;
  jobId?: string;
  /** A step's change: the workflow's jobs that have neither completed nor failed since (steps_remaining). */
  stepsRemaining?: number;
  /** step_completed: the job's last attempt; an end: since the workflow was created. */
  durationMs?: number;
  /** failed: the first step whose job failed. */
  failedStep?: string;
  failedStepType?: string;
  failedJobId?: string;
  /** The workflow's trace (its jobs' meta.traceparent), so its events join it. */
  traceparent?: string;
}

/** The parts of a fact every workflow fact shares. */
export interface WorkflowFactContext {
  plan: WorkflowPlan;
  /** The id of the job of each job node. */
  jobIds: readonly string[];
  traceparent?: string;
}

/** A job of node `node` reached its outcome for the workflow: its step fact, given how long its last attempt ran. */
export interface SettledStep {
  node: number;
  outcome: NodeOutcome;
  durationMs?: number;
}

/**
 * The facts of one advance, in order: started (a pending workflow's first
 * job started or settled), the step whose job settled (when the advance
 * settled it), then the end. What a store records in the same atomic step
 * as the advance; lib/workflows.lua records the same.
 */
export function workflowFacts(context: WorkflowFactContext, advance: WorkflowAdvance, at: number, settled?: SettledStep): WorkflowFact[] {
  const { progress } = advance.run;
  const facts: WorkflowFact[] = [];
  for (const transition of advance.transitions) {
    if (transition.to === 'running') facts.push(baseFact(context, 'started', transition.at));
  }
  // A node settled before (a job retried by hand after its workflow moved on) changes nothing and tells nothing.
  if (settled !== undefined && advance.changed.includes(settled.node)) {
    const fact = stepFact(context, settled.outcome === 'succeeded' ? 'step_completed' : 'step_failed', at, settled.node);
    fact.stepsRemaining = context.plan.jobCount - progress.completedCount - progress.failedCount;
    if (settled.outcome === 'succeeded' && settled.durationMs !== undefined) fact.durationMs = settled.durationMs;
    facts.push(fact);
  }
  for (const { to, at: endedAt } of advance.transitions) {
    if (to === 'running' || to === 'pending') continue;
    const fact = baseFact(context, to, endedAt);
    fact.durationMs = endedAt - progress.createdAt;
    if (to === 'failed') Object.assign(fact, failedStepOf(context, progress));
    facts.push(fact);
  }
  return facts;
}

/** workflow.created, when a store creates the workflow. */
export function createdFact(context: WorkflowFactContext, at: number): WorkflowFact {
  return baseFact(context, 'created', at);
}

function baseFact(context: WorkflowFactContext, change: WorkflowChange, at: number): WorkflowFact {
  const { plan } = context;
  const fact: WorkflowFact = {
    kind: 'workflow',
    at,
    workflowId: plan.id,
    workflowType: plan.type,
    name: plan.name,
    change,
    jobCount: plan.jobCount,
  };
  if (context.traceparent !== undefined) fact.traceparent = context.traceparent;
  return fact;
}

function stepFact(context: WorkflowFactContext, change: WorkflowChange, at: number, node: number): WorkflowFact {
  const fact = baseFact(context, change, at);
  fact.step = context.plan.nodes[node]?.key ?? '';
  fact.stepType = context.plan.nodes[node]?.type ?? '';
  fact.jobId = context.jobIds[node] ?? '';
  return fact;
}

function failedStepOf(context: WorkflowFactContext, progress: WorkflowProgress): Partial<WorkflowFact> {
  const node = progress.firstFailed;
  if (node === undefined) return {};
  return {
    failedStep: context.plan.nodes[node]?.key ?? '',
    failedStepType: context.plan.nodes[node]?.type ?? '',
    failedJobId: context.jobIds[node] ?? '',
  };
}
