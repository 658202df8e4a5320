import type { Command } from 'commander';
import type { SetWorkerStateRequest, WorkerInfo } from '../../gen/ojs/server/v1/operator_service';
import { WorkerState } from '../../gen/ojs/server/v1/worker_service';
import { usageError } from '../exit-codes';
import { printWorkerTable, workerJson } from '../fleet-view';
import { withSession } from '../session';

interface TargetOptions {
  label?: string;
  queue?: string;
}

/** Exactly one of a worker id, --label or --queue. */
function target(id: string | undefined, options: TargetOptions): SetWorkerStateRequest['target'] {
  const given = [
    id === undefined ? undefined : ({ $case: 'workerId', value: id } as const),
    options.label === undefined ? undefined : ({ $case: 'label', value: options.label } as const),
    options.queue === undefined ? undefined : ({ $case: 'queue', value: options.queue } as const),
  ].filter((choice) => choice !== undefined);
  if (given.length !== 1) throw usageError('name exactly one of: a worker id, --label or --queue');
  return given[0];
}

/** SetWorkerState as a command: the workers are told at once on their Beat streams. */
function addDirective(workers: Command, name: string, state: WorkerState, description: string): void {
  workers
    .command(name)
    .description(description)
    .argument('[id]', 'the worker id')
    .option('-l, --label <label>', 'every worker carrying this label')
    .option('-q, --queue <queue>', 'every worker consuming this queue')
    .action((id: string | undefined, options: TargetOptions, command: Command) =>
      withSession(command, async (session) => {
        const answer = await session.connection.operator.setWorkerState({ state, target: target(id, options) });
        if (session.output.isJson) session.output.json({ directed: answer.directed, worker_ids: answer.workerIds });
        else
          session.output.line(
            `${name}: ${answer.directed} worker(s)${answer.workerIds.length > 0 ? `: ${answer.workerIds.join(', ')}` : ''}`,
          );
      }),
    );
}

/** `ojs workers ...`: list workers and steer them. */
export function addWorkerCommands(program: Command): void {
  const workers = program.command('workers').description('list workers, quiet, resume and terminate them');

  workers
    .command('list')
    .description('registered workers: state, desired state, queues, labels, host, active jobs, last beat')
    .option('-l, --label <label>', 'only workers carrying this label')
    .option('-q, --queue <queue>', 'only workers consuming this queue')
    .action((options: TargetOptions, command: Command) =>
      withSession(command, async (session) => {
        const all: WorkerInfo[] = [];
        let pageToken = '';
        do {
          const page = await session.connection.operator.listWorkers({
            label: options.label ?? '',
            queue: options.queue ?? '',
            pageSize: 1000,
            pageToken,
          });
          all.push(...page.workers);
          pageToken = page.nextPageToken;
        } while (pageToken !== '');
        if (session.output.isJson) for (const worker of all) session.output.json(workerJson(worker));
        else printWorkerTable(session.output, all, session.nowMs());
      }),
    );

  addDirective(workers, 'quiet', WorkerState.WORKER_STATE_QUIET, 'stop workers fetching; they finish the jobs they hold');
  addDirective(workers, 'resume', WorkerState.WORKER_STATE_RUNNING, 'let quiet workers fetch again');
  addDirective(workers, 'terminate', WorkerState.WORKER_STATE_TERMINATE, 'shut workers down (they never come back from it)');
}
