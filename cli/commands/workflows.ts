import type { Command } from 'commander';
import type { Workflow } from '../../gen/ojs/server/v1/workflow_service';
import { CliError, ExitCode } from '../exit-codes';
import { withSession, type Session } from '../session';
import { readWorkflowDefinition } from '../workflow-definition-file';
import { printWorkflow, workflowJson } from '../workflow-view';

/** The workflow of an answer, which the contract always sets. */
function answered(workflow: Workflow | undefined): Workflow {
  if (workflow === undefined) throw new CliError('the server answered without the workflow', ExitCode.failure);
  return workflow;
}

function printOne(session: Session, workflow: Workflow): void {
  if (session.output.isJson) session.output.json(workflowJson(workflow));
  else printWorkflow(session.output, workflow, session.nowMs());
}

/** `ojs workflows ...`: create, show and cancel workflows (chains, groups and batches). */
export function addWorkflowCommands(program: Command): void {
  const workflows = program.command('workflows').description('create, show and cancel workflows (chains, groups and batches of jobs)');

  workflows
    .command('create')
    .description('create a workflow from a file and show it (its jobs: `ojs jobs list --workflow <id>`)')
    .requiredOption(
      '-f, --file <json>',
      'a WorkflowDefinition in the contract\'s JSON form, such as {"chain": {"steps": [{"job": {"type": "a.b", "args": []}}]}}',
    )
    .action((options: { file: string }, command: Command) =>
      withSession(command, async (session) => {
        const definition = readWorkflowDefinition(options.file);
        printOne(session, answered((await session.connection.workflows.createWorkflow({ definition })).workflow));
      }),
    );

  workflows
    .command('get')
    .description('show a workflow: its state, counts and every step with its job, attempts and result')
    .argument('<id>', 'the workflow')
    .action((workflowId: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        printOne(session, answered((await session.connection.workflows.getWorkflow({ workflowId })).workflow));
      }),
    );

  workflows
    .command('cancel')
    .description('cancel a workflow: its waiting and pending jobs, and its active ones (their workers are told)')
    .argument('<id>', 'the workflow')
    .action((workflowId: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        printOne(session, answered((await session.connection.workflows.cancelWorkflow({ workflowId })).workflow));
      }),
    );
}
