import { invalidWorkflowTransition } from './errors';

/** The workflow lifecycle of ojs-workflows section 8.1. */
export const WORKFLOW_STATES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type WorkflowState = (typeof WORKFLOW_STATES)[number];

/**
 * Every allowed workflow transition (section 8.2); anything else is refused.
 * pending: created, no job started yet. running: a job started (or settled
 * without starting: see workflow-run.ts). The other three are terminal.
 */
const NEXT_STATES: Readonly<Record<WorkflowState, readonly WorkflowState[]>> = {
  pending: ['running', 'cancelled'],
  running: ['completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function isTerminalWorkflowState(state: WorkflowState): boolean {
  return NEXT_STATES[state].length === 0;
}

export function canWorkflowTransition(from: WorkflowState, to: WorkflowState): boolean {
  return NEXT_STATES[from].includes(to);
}

/** Throws an `invalid_state` OjsError unless `from -> to` is allowed (cancelling a finished workflow: 409 in section 11.3). */
export function assertWorkflowTransition(workflowId: string, from: WorkflowState, to: WorkflowState): void {
  if (!canWorkflowTransition(from, to)) throw invalidWorkflowTransition(workflowId, from, to);
}
