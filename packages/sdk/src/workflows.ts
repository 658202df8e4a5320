import type { Job as WireJob } from '../gen/ojs/server/v1/job';
import {
  WorkflowState as WireWorkflowState,
  WorkflowStepCancelReason,
  WorkflowStepRole,
  WorkflowStepState,
  WorkflowType as WireWorkflowType,
  type Workflow as WireWorkflow,
  type WorkflowDefinition as WireDefinition,
  type WorkflowElement as WireElement,
  type WorkflowStep as WireStep,
} from '../gen/ojs/server/v1/workflow_service';
import { nameOf } from './job';
import { wireSpec, type JobSpec } from './job-spec';

/** A job of a workflow: a job spec as enqueue takes it, without a time or a unique policy of its own (its workflow says when it runs). */
export type WorkflowJobSpec = Omit<JobSpec, 'scheduledAt' | 'unique'>;

/** Sequential: each step starts when the one before it succeeded; step k gets steps 0..k-1's results in `parentResults`. */
export interface ChainSpec {
  kind: 'chain';
  name?: string;
  steps: WorkflowElementSpec[];
}

/** Parallel: every job starts at once; the group fails (once all have finished) when one fails. */
export interface GroupSpec {
  kind: 'group';
  name?: string;
  jobs: WorkflowElementSpec[];
}

/** Parallel, then callbacks by the jobs' outcome: onComplete always, onSuccess when all succeeded, onFailure when one failed. */
export interface BatchSpec {
  kind: 'batch';
  name?: string;
  jobs: WorkflowElementSpec[];
  callbacks: BatchCallbacksSpec;
}

/** At least one of them. */
export interface BatchCallbacksSpec {
  onComplete?: WorkflowJobSpec;
  onSuccess?: WorkflowJobSpec;
  onFailure?: WorkflowJobSpec;
}

/** A workflow: a chain, a group or a batch (ojs-workflows), nested up to 5 levels, at most 1,000 jobs. */
export type WorkflowSpec = ChainSpec | GroupSpec | BatchSpec;
/** A chain's step, or a group's or batch's job: a job, or a nested workflow. */
export type WorkflowElementSpec = WorkflowJobSpec | WorkflowSpec;

/** A chain of steps: `chain(a, b, c)`; name it with `{ ...chain(a, b), name: 'etl' }`. */
export function chain(...steps: WorkflowElementSpec[]): ChainSpec {
  return { kind: 'chain', steps };
}

/** A group of jobs run at once: `group(a, b, c)`. */
export function group(...jobs: WorkflowElementSpec[]): GroupSpec {
  return { kind: 'group', jobs };
}

/** A batch: `batch([a, b], { onComplete: report, onFailure: alert })`. */
export function batch(jobs: WorkflowElementSpec[], callbacks: BatchCallbacksSpec): BatchSpec {
  return { kind: 'batch', jobs, callbacks };
}

/**
 * The definition as sent. `newId` names each job that has no id of its own,
 * so that a call retried after its answer was lost can find what it stored;
 * `jobs` collects every job as sent.
 */
export function toWireDefinition(spec: WorkflowSpec, newId: () => string, jobs: WireJob[] = []): WireDefinition {
  return { kind: wireNested(spec, newId, jobs) };
}

function wireNested(spec: WorkflowSpec, newId: () => string, jobs: WireJob[]): NonNullable<WireDefinition['kind']> {
  const name = spec.name ?? '';
  const elements = (list: WorkflowElementSpec[]) => list.map((element) => wireElement(element, newId, jobs));
  const job = (callback: WorkflowJobSpec | undefined) => (callback === undefined ? undefined : wireJob(callback, newId, jobs));
  switch (spec.kind) {
    case 'chain':
      return { $case: 'chain', value: { name, steps: elements(spec.steps) } };
    case 'group':
      return { $case: 'group', value: { name, jobs: elements(spec.jobs) } };
    case 'batch': {
      const { onComplete, onSuccess, onFailure } = spec.callbacks;
      const callbacks = { onComplete: job(onComplete), onSuccess: job(onSuccess), onFailure: job(onFailure) };
      return { $case: 'batch', value: { name, jobs: elements(spec.jobs), callbacks } };
    }
  }
}

function wireElement(element: WorkflowElementSpec, newId: () => string, jobs: WireJob[]): WireElement {
  return { kind: 'kind' in element ? wireNested(element, newId, jobs) : { $case: 'job', value: wireJob(element, newId, jobs) } };
}

function wireJob(spec: WorkflowJobSpec, newId: () => string, jobs: WireJob[]): WireJob {
  const job = wireSpec(spec);
  if (job.id === '') job.id = newId();
  jobs.push(job);
  return job;
}

export type WorkflowTypeName = 'chain' | 'group' | 'batch' | 'unspecified' | 'unrecognized';
/** ojs-workflows 8: pending until a job starts, then running, then completed, failed or cancelled. */
export type WorkflowStateName = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'unspecified' | 'unrecognized';
export type WorkflowStepRoleName = 'step' | 'job' | 'on_complete' | 'on_success' | 'on_failure' | 'unspecified' | 'unrecognized';
export type WorkflowStepStateName =
  'waiting' | 'pending' | 'active' | 'completed' | 'failed' | 'cancelled' | 'unspecified' | 'unrecognized';
export type WorkflowStepCancelReasonName = 'not_triggered' | 'upstream_failed' | 'workflow_cancelled' | 'unrecognized';

const TYPE_NAMES: Record<WireWorkflowType, WorkflowTypeName> = {
  [WireWorkflowType.WORKFLOW_TYPE_UNSPECIFIED]: 'unspecified',
  [WireWorkflowType.WORKFLOW_TYPE_CHAIN]: 'chain',
  [WireWorkflowType.WORKFLOW_TYPE_GROUP]: 'group',
  [WireWorkflowType.WORKFLOW_TYPE_BATCH]: 'batch',
  [WireWorkflowType.UNRECOGNIZED]: 'unrecognized',
};
const STATE_NAMES: Record<WireWorkflowState, WorkflowStateName> = {
  [WireWorkflowState.WORKFLOW_STATE_UNSPECIFIED]: 'unspecified',
  [WireWorkflowState.WORKFLOW_STATE_PENDING]: 'pending',
  [WireWorkflowState.WORKFLOW_STATE_RUNNING]: 'running',
  [WireWorkflowState.WORKFLOW_STATE_COMPLETED]: 'completed',
  [WireWorkflowState.WORKFLOW_STATE_FAILED]: 'failed',
  [WireWorkflowState.WORKFLOW_STATE_CANCELLED]: 'cancelled',
  [WireWorkflowState.UNRECOGNIZED]: 'unrecognized',
};
const ROLE_NAMES: Record<WorkflowStepRole, WorkflowStepRoleName> = {
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_UNSPECIFIED]: 'unspecified',
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_STEP]: 'step',
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_JOB]: 'job',
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_COMPLETE]: 'on_complete',
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_SUCCESS]: 'on_success',
  [WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_FAILURE]: 'on_failure',
  [WorkflowStepRole.UNRECOGNIZED]: 'unrecognized',
};
const STEP_STATE_NAMES: Record<WorkflowStepState, WorkflowStepStateName> = {
  [WorkflowStepState.WORKFLOW_STEP_STATE_UNSPECIFIED]: 'unspecified',
  [WorkflowStepState.WORKFLOW_STEP_STATE_WAITING]: 'waiting',
  [WorkflowStepState.WORKFLOW_STEP_STATE_PENDING]: 'pending',
  [WorkflowStepState.WORKFLOW_STEP_STATE_ACTIVE]: 'active',
  [WorkflowStepState.WORKFLOW_STEP_STATE_COMPLETED]: 'completed',
  [WorkflowStepState.WORKFLOW_STEP_STATE_FAILED]: 'failed',
  [WorkflowStepState.WORKFLOW_STEP_STATE_CANCELLED]: 'cancelled',
  [WorkflowStepState.UNRECOGNIZED]: 'unrecognized',
};
/** Unspecified is "not cancelled": undefined. */
const CANCEL_REASON_NAMES: Record<WorkflowStepCancelReason, WorkflowStepCancelReasonName | undefined> = {
  [WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED]: undefined,
  [WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_NOT_TRIGGERED]: 'not_triggered',
  [WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UPSTREAM_FAILED]: 'upstream_failed',
  [WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_WORKFLOW_CANCELLED]: 'workflow_cancelled',
  [WorkflowStepCancelReason.UNRECOGNIZED]: 'unrecognized',
};

/** One job of a workflow as the server sees it. */
export interface WorkflowStep extends Omit<WireStep, 'role' | 'state' | 'cancelReason' | 'jobId' | 'result'> {
  role: WorkflowStepRoleName;
  /** waiting (for earlier steps), pending (its job is queued), active, completed, failed or cancelled. */
  state: WorkflowStepStateName;
  /** Why a cancelled step was cancelled; undefined otherwise. */
  cancelReason: WorkflowStepCancelReasonName | undefined;
  /** Its job (producer.result() takes it). */
  jobId: string;
  /** What its handler returned, once completed. */
  result: unknown;
}

/** A workflow and every one of its jobs, in definition order. */
export interface Workflow extends Omit<WireWorkflow, 'type' | 'state' | 'steps'> {
  type: WorkflowTypeName;
  state: WorkflowStateName;
  steps: WorkflowStep[];
}

export function workflowFromWire(workflow: WireWorkflow): Workflow {
  return {
    ...workflow,
    type: nameOf(TYPE_NAMES, workflow.type),
    state: nameOf(STATE_NAMES, workflow.state),
    steps: workflow.steps.map((step) => ({
      ...step,
      role: nameOf(ROLE_NAMES, step.role),
      state: nameOf(STEP_STATE_NAMES, step.state),
      cancelReason: step.cancelReason in CANCEL_REASON_NAMES ? CANCEL_REASON_NAMES[step.cancelReason] : 'unrecognized',
    })),
  };
}
