import type { JobState } from './job';
import type { JsonValue } from './json';
import type { NodeRole, WorkflowPlan } from './workflow-plan';
import { nodeDecision, type WorkflowRun } from './workflow-run';
import type { WorkflowState } from './workflow-state-machine';

/** A step's state as GetWorkflow shows it (ojs-workflows section 4.4). */
export type StepState = 'waiting' | 'pending' | 'active' | 'completed' | 'failed' | 'cancelled';

/**
 * Why a cancelled step never ran or stopped: a callback its batch's outcome
 * did not trigger, something it needed failed, or the workflow was cancelled.
 */
export type CancelReason = 'not_triggered' | 'upstream_failed' | 'workflow_cancelled';

/** What the store knows of a node's job. */
export interface StepJob {
  id: string;
  queue: string;
  state: JobState;
  attempt: number;
  startedAt?: number;
  completedAt?: number;
  result?: JsonValue;
}

export interface StepView {
  index: number;
  path: string;
  key: string;
  role: Exclude<NodeRole, 'join'>;
  type: string;
  state: StepState;
  cancelReason?: CancelReason;
  jobId?: string;
  attempts: number;
  /** When its job's last attempt started, and when its job finished. */
  startedAt?: number;
  completedAt?: number;
  result?: JsonValue;
}

/** A workflow as GetWorkflow shows it (section 11.2): its state, metadata (section 3.3) and every job. */
export interface WorkflowView {
  id: string;
  type: WorkflowPlan['type'];
  name: string;
  state: WorkflowState;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  jobCount: number;
  completedCount: number;
  failedCount: number;
  /** Every job node, in definition order (joins are bookkeeping and not shown). */
  steps: StepView[];
}

export function workflowView(plan: WorkflowPlan, run: WorkflowRun, jobOf: (index: number) => StepJob | undefined): WorkflowView {
  const { progress } = run;
  const view: WorkflowView = {
    id: plan.id,
    type: plan.type,
    name: plan.name,
    state: progress.state,
    createdAt: progress.createdAt,
    jobCount: plan.jobCount,
    completedCount: progress.completedCount,
    failedCount: progress.failedCount,
    steps: plan.nodes.slice(0, plan.jobCount).map((node, index) => {
      const job = jobOf(index);
      const step: StepView = {
        index,
        path: node.path,
        key: node.key,
        role: node.role === 'join' ? 'job' : node.role,
        type: node.type,
        state: stepState(run, index, job),
        attempts: job?.attempt ?? 0,
      };
      if (step.state === 'cancelled') step.cancelReason = cancelReason(plan, run, index);
      if (job !== undefined) step.jobId = job.id;
      if (job?.startedAt !== undefined) step.startedAt = job.startedAt;
      if (job?.completedAt !== undefined) step.completedAt = job.completedAt;
      if (job?.result !== undefined) step.result = job.result;
      return step;
    }),
  };
  if (progress.startedAt !== undefined) view.startedAt = progress.startedAt;
  if (progress.completedAt !== undefined) view.completedAt = progress.completedAt;
  return view;
}

function stepState(run: WorkflowRun, index: number, job: StepJob | undefined): StepState {
  const status = run.nodes[index]?.status ?? 'waiting';
  switch (status) {
    case 'waiting':
      return 'waiting';
    case 'enqueued':
      return job?.state === 'active' ? 'active' : 'pending';
    case 'succeeded':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'cancelled':
    case 'skipped':
      return 'cancelled';
  }
}

/** Derived from the node's counters: a node stopped by its rule had all its dependencies settled, and they said it must not run. */
function cancelReason(plan: WorkflowPlan, run: WorkflowRun, index: number): CancelReason {
  const node = run.nodes[index];
  if (node?.status === 'skipped') return 'not_triggered';
  const stoppedByRule = node !== undefined && node.remaining === 0 && nodeDecision(plan, run.nodes, index) !== 'run';
  return stoppedByRule ? 'upstream_failed' : 'workflow_cancelled';
}
