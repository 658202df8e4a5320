import { JOB_STATES } from '../../../domain/job';
import { isTerminal } from '../../../domain/job-state-machine';
import type { StepJob } from '../../../domain/workflow-view';
import type { WorkflowRecord } from '../../job-store';
import { readArray, readFlatHash, readInteger, readJson, readOneOf, readOptionalNumberText, readString, unexpectedReply } from '../reply';
import { decodeWorkflow } from '../workflow-codec';

/**
 * A workflow as lib/workflows.lua Workflow.record returns it: {plan hash,
 * run hash, {{state, queue, attempt, startedAt, completedAt} of each job
 * node's job, {} once removed}...}; undefined for {} (no such workflow).
 * A node's result is the run's copy of it (r<i>).
 */
export function readWorkflowRecord(value: unknown, workflowId: string): WorkflowRecord | undefined {
  const parts = readArray(value, 'workflow record');
  if (parts.length === 0) return undefined;
  const [planValue, runValue, jobsValue] = parts;
  const runHash = readFlatHash(runValue, 'workflow run hash');
  const stored = decodeWorkflow(workflowId, readFlatHash(planValue, 'workflow plan hash'), runHash);
  if (stored === undefined) return unexpectedReply('workflow record', value);
  const { plan, run, jobIds } = stored;
  const jobs = readArray(jobsValue, 'workflow jobs').map((fields, i): StepJob | undefined => {
    const [state, queue, attempt, startedAt, completedAt] = readArray(fields, `workflow job ${i}`);
    if (state === undefined) return undefined;
    const job: StepJob = {
      id: jobIds[i] ?? unexpectedReply(`workflow job id ${i}`, fields),
      queue: readString(queue, `workflow job ${i} queue`),
      state: readOneOf(state, JOB_STATES, `workflow job ${i} state`),
      attempt: readInteger(attempt, `workflow job ${i} attempt`),
    };
    const started = readOptionalNumberText(optional(startedAt, i), `workflow job ${i} startedAt`);
    if (started !== undefined) job.startedAt = started;
    const completed = readOptionalNumberText(optional(completedAt, i), `workflow job ${i} completedAt`);
    if (completed !== undefined && isTerminal(job.state)) job.completedAt = completed;
    const result = runHash[`r${i}`];
    if (result !== undefined && run.nodes[i]?.status === 'succeeded') job.result = readJson(result, `workflow result ${i}`);
    return job;
  });
  if (jobs.length !== plan.jobCount) unexpectedReply('workflow jobs (one per job node)', value);
  return { plan, run, jobIds, jobs };
}

/** '' (unset) as undefined. */
function optional(value: unknown, i: number): string | undefined {
  const text = readString(value, `workflow job ${i} time`);
  return text === '' ? undefined : text;
}
