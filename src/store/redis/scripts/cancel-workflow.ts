import { invalidWorkflowTransition, workflowNotFound } from '../../../domain/errors';
import type { JobTransition } from '../../../domain/transition';
import { WORKFLOW_STATES } from '../../../domain/workflow-state-machine';
import type { CancelWorkflowParams, WorkflowRecord } from '../../job-store';
import { decodeTransitions } from '../fact-codec';
import { readOneOf, readStatus, unexpectedReply } from '../reply';
import { arg, declareScript } from '../script';
import { refusalError } from '../script-errors';
import { readWorkflowRecord } from './workflow-record';

/** Cancels a workflow and its unsettled jobs, active ones included (lua/cancel-workflow.lua). */
export const cancelWorkflowScript = declareScript({
  name: 'cancel-workflow',
  encode: (params: CancelWorkflowParams) => [
    arg.int(params.now, 'now'),
    arg.id(params.workflowId, 'workflow id'),
    arg.text(params.actor ?? '', 'actor'),
  ],
  decode(reply, params): { workflow: WorkflowRecord; transitions: JobTransition[] } {
    const { status, rest } = readStatus(reply, 'cancel workflow');
    if (status === 'not_found') throw workflowNotFound(params.workflowId);
    if (status === 'invalid_state') {
      throw invalidWorkflowTransition(params.workflowId, readOneOf(rest[0], WORKFLOW_STATES, 'workflow state'), 'cancelled');
    }
    if (status !== 'ok') throw refusalError({ status });
    const [transitions, record] = rest;
    const workflow = readWorkflowRecord(record, params.workflowId) ?? unexpectedReply('cancelled workflow', record);
    return { workflow, transitions: decodeTransitions(transitions) };
  },
});
