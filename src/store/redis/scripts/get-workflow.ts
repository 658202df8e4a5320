import type { WorkflowRecord } from '../../job-store';
import { arg, declareScript } from '../script';
import { readWorkflowRecord } from './workflow-record';

/** One workflow with its jobs as they stand, if there is one (lua/get-workflow.lua). */
export const getWorkflowScript = declareScript({
  name: 'get-workflow',
  isReadOnly: true,
  encode: (workflowId: string) => [arg.id(workflowId, 'workflow id')],
  decode: (reply, workflowId): WorkflowRecord | undefined => readWorkflowRecord(reply, workflowId),
});
