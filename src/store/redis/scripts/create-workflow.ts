import { OjsError } from '../../../domain/errors';
import type { NewWorkflow } from '../../../domain/workflow-creation';
import { factText } from '../fact-codec';
import { readStatus, readString } from '../reply';
import { arg, declareScript, type ScriptArg } from '../script';
import { refusalError } from '../script-errors';
import { encodeWorkflowPlan, encodeWorkflowRun } from '../workflow-codec';
import { appendNewJobs } from './new-jobs';

/**
 * Stores a workflow and its jobs, all or none (lua/create-workflow.lua).
 * The plan also keeps, for the facts lib/workflows.lua records, the
 * workflow's name and its jobs' traceparent (one trace: the first job's that has one)
 * as facts hold them.
 */
export const createWorkflowScript = declareScript({
  name: 'create-workflow',
  encode: ({ plan, run, jobs }: NewWorkflow, settings) => {
    const traceparent = jobs.map((job) => job.meta['traceparent']).find((value) => typeof value === 'string');
    const planFields = [
      ...encodeWorkflowPlan(
        plan,
        jobs.map((job) => job.id),
      ),
      'fname',
      factText(plan.name),
      'tp',
      typeof traceparent === 'string' ? factText(traceparent) : '',
    ];
    const runFields = encodeWorkflowRun(run);
    const now = run.progress.createdAt;
    const args: ScriptArg[] = [arg.int(now, 'now'), arg.id(plan.id, 'workflow id'), planFields.length];
    for (const value of planFields) args.push(value);
    args.push(runFields.length);
    for (const value of runFields) args.push(value);
    return appendNewJobs(args, jobs, now, settings);
  },
  decode(reply, { plan }): void {
    const { status, rest } = readStatus(reply, 'create workflow');
    if (status === 'duplicate_workflow') {
      throw new OjsError('duplicate', `workflow ${JSON.stringify(plan.id)} already exists`, { metadata: { workflow_id: plan.id } });
    }
    if (status !== 'ok') throw refusalError({ status, jobId: readString(rest[0], 'duplicate job id') });
  },
});
