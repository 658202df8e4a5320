import { invalidPayload, invalidRequest, payloadTooLarge, type FieldViolation } from './errors';
import type { Job } from './job';
import { buildJob, type JobCreation, type SubmissionProblems } from './job-submission';
import { compileWorkflow, countWorkflowJobs } from './workflow-compile';
import { MAX_WORKFLOW_JOBS, type WorkflowDefinition } from './workflow-definition';
import type { WorkflowPlan } from './workflow-plan';
import { initialRun, type WorkflowRun } from './workflow-run';

/** Everything a store writes, in one operation, to create a workflow. */
export interface NewWorkflow {
  plan: WorkflowPlan;
  /** The job of each job node, by node index: available when the node has no dependencies, pending otherwise. */
  jobs: Job[];
  run: WorkflowRun;
}

/**
 * Validates a workflow and builds its plan, jobs and initial progress (the
 * workflow's id is `creation.newId()`). Everything wrong is reported at
 * once, each field named by its path in the definition (section 10.2:
 * refused at creation, never half-run): an `invalid_payload` error for the
 * structure and the jobs' fields, `payload_too_large` for a job over the
 * size limit, and first of all `invalid_request` for more than
 * MAX_WORKFLOW_JOBS jobs, which is checked before anything else is built.
 */
export function createWorkflow(definition: WorkflowDefinition, creation: JobCreation): NewWorkflow {
  const list = definition.kind === 'chain' ? 'steps' : 'jobs';
  const jobCount = countWorkflowJobs(definition);
  if (jobCount > MAX_WORKFLOW_JOBS) {
    throw invalidRequest(
      list,
      `a workflow may hold at most ${MAX_WORKFLOW_JOBS} jobs, callbacks and nested jobs included; this one holds ${jobCount}`,
    );
  }
  const violations: FieldViolation[] = [];
  const { plan, submissions } = compileWorkflow(definition, creation.newId(), violations);
  const problems: SubmissionProblems = { violations, oversized: [], answerBytes: 0 };
  const pathOfId = new Map<string, string>();
  const jobs = submissions.map((submission, index) => {
    const node = plan.nodes[index];
    const path = node?.path ?? '';
    const waits = (node?.dependencies.length ?? 0) > 0;
    const built = buildJob(submission, { ...creation, pending: creation.pending || waits }, path, problems);
    // A step runs when its workflow says: a time of its own, or a key another job could take it by, would contradict that.
    if (submission.scheduledAt !== undefined)
      violations.push({ field: `${path}.scheduled_at`, description: 'is not supported within a workflow' });
    if (submission.unique !== undefined) violations.push({ field: `${path}.unique`, description: 'is not supported within a workflow' });
    const job: Job = { ...built, workflow: { id: plan.id, node: index, step: node?.key ?? '' } };
    if (submission.id !== undefined && submission.id !== '') {
      const first = pathOfId.get(submission.id);
      if (first !== undefined) violations.push({ field: `${path}.id`, description: `is also the id of ${first}` });
      else pathOfId.set(submission.id, path);
    }
    return job;
  });
  if (violations.length > 0) throw invalidPayload(violations);
  const [oversized] = problems.oversized;
  if (oversized !== undefined) throw payloadTooLarge(oversized.field, oversized.bytes, oversized.maxBytes);
  return { plan, jobs, run: initialRun(plan, creation.now) };
}
