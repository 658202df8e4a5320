import { quote } from '../../domain/errors';
import { isTerminal } from '../../domain/job-state-machine';
import { isNodeSettled } from '../../domain/workflow-run';
import { isTerminalWorkflowState } from '../../domain/workflow-state-machine';
import type { MemoryTables } from './memory-tables';

/**
 * Every broken invariant of the stored workflows, as sentences: counters
 * against node statuses, the end against what has settled, each node's job
 * against its status, and each workflow job's link against its workflow.
 */
export function workflowProblems(tables: MemoryTables): string[] {
  const problems: string[] = [];
  for (const { plan, run, jobIds } of tables.workflows.values()) {
    const name = `workflow ${quote(plan.id)}`;
    const { progress, nodes } = run;
    const jobNodes = nodes.slice(0, plan.jobCount);
    const count = (status: string): number => jobNodes.filter((node) => node.status === status).length;
    const settled = nodes.filter((node) => isNodeSettled(node.status)).length;
    if (progress.completedCount !== count('succeeded'))
      problems.push(`${name} counts ${progress.completedCount} completed jobs, not ${count('succeeded')}`);
    if (progress.failedCount !== count('failed'))
      problems.push(`${name} counts ${progress.failedCount} failed jobs, not ${count('failed')}`);
    if (progress.settledCount !== settled) problems.push(`${name} counts ${progress.settledCount} settled nodes, not ${settled}`);
    const isEnded = isTerminalWorkflowState(progress.state);
    if (isEnded !== (settled === nodes.length))
      problems.push(`${name} is ${progress.state} with ${settled} of ${nodes.length} nodes settled`);
    jobIds.forEach((id, node) => {
      const job = tables.jobs.get(id)?.job;
      if (job === undefined) return;
      if (job.workflow?.id !== plan.id || job.workflow.node !== node)
        problems.push(`job ${quote(id)} of ${name} does not link to node ${node}`);
      const status = nodes[node]?.status;
      if (status === 'waiting' && job.state !== 'pending') problems.push(`job ${quote(id)} of ${name} is ${job.state} but its node waits`);
      if (status === 'enqueued' && (job.state === 'pending' || isTerminal(job.state))) {
        problems.push(`job ${quote(id)} of ${name} is ${job.state} but its node is enqueued`);
      }
      if (status !== undefined && isNodeSettled(status) && !isTerminal(job.state) && status !== 'failed') {
        problems.push(`job ${quote(id)} of ${name} is ${job.state} but its node is ${status}`);
      }
    });
  }
  for (const [id, { job }] of tables.jobs) {
    const link = job.workflow;
    const workflow = link === undefined ? undefined : tables.workflows.get(link.id);
    // A job may outlive its workflow's retention, never the other way round while it waits.
    if (link !== undefined && workflow === undefined && job.state === 'pending')
      problems.push(`job ${quote(id)} waits for workflow ${quote(link.id)}, which is gone`);
  }
  return problems;
}
