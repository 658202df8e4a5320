import {
  WorkflowState,
  WorkflowStepCancelReason,
  WorkflowStepRole,
  WorkflowStepState,
  WorkflowType,
  type Workflow,
  type WorkflowStep,
} from '../gen/ojs/server/v1/workflow_service';
import { enumName } from './enum-names';
import type { Output, Style } from './output';
import { exactAndRelativeTime, relativeTime } from './relative-time';
import { toWire } from './wire';

const typeName = (type: WorkflowType): string => enumName(WorkflowType, 'WORKFLOW_TYPE_', type);
const stateName = (state: WorkflowState): string => enumName(WorkflowState, 'WORKFLOW_STATE_', state);
const roleName = (role: WorkflowStepRole): string => enumName(WorkflowStepRole, 'WORKFLOW_STEP_ROLE_', role);
const stepStateName = (state: WorkflowStepState): string => enumName(WorkflowStepState, 'WORKFLOW_STEP_STATE_', state);
const cancelReasonName = (reason: WorkflowStepCancelReason): string | undefined =>
  reason === WorkflowStepCancelReason.WORKFLOW_STEP_CANCEL_REASON_UNSPECIFIED
    ? undefined
    : enumName(WorkflowStepCancelReason, 'WORKFLOW_STEP_CANCEL_REASON_', reason);

/** A workflow as `--json` prints it: the contract's snake_case names, enums by name ("state": "running"). */
export function workflowJson(workflow: Workflow): unknown {
  return toWire({
    ...workflow,
    type: typeName(workflow.type),
    state: stateName(workflow.state),
    steps: workflow.steps.map((step) => ({
      ...step,
      role: roleName(step.role),
      state: stepStateName(step.state),
      cancelReason: cancelReasonName(step.cancelReason),
    })),
  });
}

const STATE_STYLES: Partial<Record<string, Style>> = {
  completed: 'green',
  active: 'cyan',
  running: 'cyan',
  failed: 'red',
  cancelled: 'dim',
};

function painted(output: Output, name: string): string {
  const style = STATE_STYLES[name];
  return style === undefined ? name : output.paint(style, name);
}

/** A step's result on one line, cut to keep the table readable (`--json` has it whole). */
function resultText(step: WorkflowStep): string {
  if (step.result === undefined) return '';
  const text = JSON.stringify(step.result);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** One workflow: its fields, then its steps as a table in definition order. */
export function printWorkflow(output: Output, workflow: Workflow, nowMs: number): void {
  const when = (at: Date | undefined): string => exactAndRelativeTime(at, nowMs);
  output.fields([
    ['id', workflow.id],
    ['type', typeName(workflow.type)],
    ['name', workflow.name],
    ['state', painted(output, stateName(workflow.state))],
    ['jobs', `${workflow.jobCount} (${workflow.completedCount} completed, ${workflow.failedCount} failed)`],
    ['created', when(workflow.createdAt)],
    ['started', when(workflow.startedAt)],
    ['finished', when(workflow.completedAt)],
  ]);
  output.line('');
  output.table(
    ['STEP', 'ROLE', 'TYPE', 'STATE', 'JOB', 'ATTEMPTS', 'STARTED', 'FINISHED', 'RESULT'],
    workflow.steps.map((step) => {
      const reason = cancelReasonName(step.cancelReason);
      const state = painted(output, stepStateName(step.state));
      return [
        step.key === '' ? String(step.index) : step.key,
        roleName(step.role),
        step.type,
        reason === undefined ? state : `${state} (${reason})`,
        step.jobId,
        String(step.attempts),
        relativeTime(step.startedAt, nowMs),
        relativeTime(step.completedAt, nowMs),
        resultText(step),
      ];
    }),
  );
}
