import { invalidRequest } from '../../domain/errors';
import {
  MAX_WORKFLOW_DEPTH,
  type BatchCallbacks,
  type WorkflowDefinition,
  type WorkflowElement,
  type WorkflowType,
} from '../../domain/workflow-definition';
import type { WorkflowState } from '../../domain/workflow-state-machine';
import type { CancelReason, StepState, StepView, WorkflowView } from '../../domain/workflow-view';
import type { Job as ProtoJob } from '../../../gen/ojs/server/v1/job';
import {
  WorkflowState as ProtoWorkflowState,
  WorkflowStepCancelReason,
  WorkflowStepRole,
  WorkflowStepState,
  WorkflowType as ProtoWorkflowType,
  type Workflow,
  type WorkflowBatchCallbacks,
  type WorkflowDefinition as ProtoWorkflowDefinition,
  type WorkflowElement as ProtoWorkflowElement,
  type WorkflowStep,
} from '../../../gen/ojs/server/v1/workflow_service';
import { toSubmission } from './job-mapper';
import { toDate } from './time-mapping';

/** A nested workflow as the contract carries it, whichever primitive it is. */
type ProtoNested = Exclude<ProtoWorkflowElement['kind'], { $case: 'job' } | undefined>;

/**
 * A definition as the domain reads it. Fields are named as ojs-workflows
 * names them ("steps[1].jobs[0]"), which is how the domain reports what is
 * wrong. Nested workflows deeper than the domain accepts are passed on
 * without their elements, so that the domain refuses them by their path
 * and nothing here walks a nesting as deep as a hostile request makes it.
 */
export function toWorkflowDefinition(definition: ProtoWorkflowDefinition | undefined): WorkflowDefinition {
  const kind = definition?.kind;
  if (kind === undefined) throw invalidRequest('definition', 'must be a chain, a group or a batch');
  return toNested(kind, '', 1);
}

function toNested(nested: ProtoNested, path: string, depth: number): WorkflowDefinition {
  const { name } = nested.value;
  const named = name === '' ? {} : { name };
  const children = (list: 'steps' | 'jobs', elements: ProtoWorkflowElement[]): WorkflowElement[] =>
    depth > MAX_WORKFLOW_DEPTH ? [] : elements.map((element, i) => toElement(element, fieldOf(path, `${list}[${i}]`), depth + 1));
  switch (nested.$case) {
    case 'chain':
      return { kind: 'chain', ...named, steps: children('steps', nested.value.steps) };
    case 'group':
      return { kind: 'group', ...named, jobs: children('jobs', nested.value.jobs) };
    case 'batch':
      return {
        kind: 'batch',
        ...named,
        jobs: children('jobs', nested.value.jobs),
        callbacks: toCallbacks(nested.value.callbacks, fieldOf(path, 'callbacks')),
      };
  }
}

function toElement(element: ProtoWorkflowElement, path: string, depth: number): WorkflowElement {
  const { kind } = element;
  if (kind === undefined) throw invalidRequest(path, 'must be a job, a chain, a group or a batch');
  return kind.$case === 'job' ? { kind: 'job', job: toSubmission(kind.value, path) } : toNested(kind, path, depth);
}

function toCallbacks(callbacks: WorkflowBatchCallbacks | undefined, path: string): BatchCallbacks {
  const result: BatchCallbacks = {};
  const callback = (job: ProtoJob | undefined, kind: string) => (job === undefined ? undefined : toSubmission(job, `${path}.${kind}`));
  const onComplete = callback(callbacks?.onComplete, 'on_complete');
  const onSuccess = callback(callbacks?.onSuccess, 'on_success');
  const onFailure = callback(callbacks?.onFailure, 'on_failure');
  if (onComplete !== undefined) result.onComplete = onComplete;
  if (onSuccess !== undefined) result.onSuccess = onSuccess;
  if (onFailure !== undefined) result.onFailure = onFailure;
  return result;
}

/** The field `name` of the element at `path` (the root's path is empty). */
function fieldOf(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

const WORKFLOW_TYPES: Record<WorkflowType, ProtoWorkflowType> = {
  chain: ProtoWorkflowType.WORKFLOW_TYPE_CHAIN,
  group: ProtoWorkflowType.WORKFLOW_TYPE_GROUP,
  batch: ProtoWorkflowType.WORKFLOW_TYPE_BATCH,
};

const WORKFLOW_STATES: Record<WorkflowState, ProtoWorkflowState> = {
  pending: ProtoWorkflowState.WORKFLOW_STATE_PENDING,
  running: ProtoWorkflowState.WORKFLOW_STATE_RUNNING,
  completed: ProtoWorkflowState.WORKFLOW_STATE_COMPLETED,
  failed: ProtoWorkflowState.WORKFLOW_STATE_FAILED,
  cancelled: ProtoWorkflowState.WORKFLOW_STATE_CANCELLED,
};

const STEP_ROLES: Record<StepView['role'], WorkflowStepRole> = {
  step: WorkflowStepRole.WORKFLOW_STEP_ROLE_STEP,
  job: WorkflowStepRole.WORKFLOW_STEP_ROLE_JOB,
  on_complete: WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_COMPLETE,
  on_success: WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_SUCCESS,
  on_failure: WorkflowStepRole.WORKFLOW_STEP_ROLE_ON_FAILURE,
};

const STEP_STATES: Record<StepState, WorkflowStepState> = {
  waiting: WorkflowStepState.WORKFLOW_STEP_STATE_WAITING,
  pending: WorkflowStepState.WORKFLOW_STEP_STATE_PENDING,
  active: WorkflowStepState.WORKFLOW_STEP_STATE_ACTIVE,
  completed: WorkflowStepState.WORKFLOW_STEP_STATE_COMPLETED,
  failed: WorkflowStepState.WORKFLOW_STEP_STATE_FAILED,
  cancelled: WorkflowStepState.WORKFLOW_STEP_STATE_CANCELLED,
};

const CANCEL_REASONS: Record<CancelReason, WorkflowStepCancelReason> = {
  not_triggered: WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_NOT_TRIGGERED,
  upstream_failed: WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UPSTREAM_FAILED,
  workflow_cancelled: WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_WORKFLOW_CANCELLED,
};

export function toProtoWorkflow(view: WorkflowView): Workflow {
  return {
    id: view.id,
    type: WORKFLOW_TYPES[view.type],
    name: view.name,
    state: WORKFLOW_STATES[view.state],
    createdAt: toDate(view.createdAt),
    startedAt: toDate(view.startedAt),
    completedAt: toDate(view.completedAt),
    jobCount: view.jobCount,
    completedCount: view.completedCount,
    failedCount: view.failedCount,
    steps: view.steps.map(toProtoStep),
  };
}

function toProtoStep(step: StepView): WorkflowStep {
  return {
    index: step.index,
    path: step.path,
    key: step.key,
    role: STEP_ROLES[step.role],
    type: step.type,
    state: STEP_STATES[step.state],
    cancelReason:
      step.cancelReason === undefined
        ? WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED
        : CANCEL_REASONS[step.cancelReason],
    jobId: step.jobId ?? '',
    attempts: step.attempts,
    startedAt: toDate(step.startedAt),
    completedAt: toDate(step.completedAt),
    result: step.result,
  };
}
