import type { Command } from 'commander';
import type { QueueInfo } from '../../gen/ojs/server/v1/operator_service';
import { CliError, ExitCode } from '../exit-codes';
import { printQueueTable, queueJson } from '../fleet-view';
import { withSession, type Session } from '../session';
import { toWire } from '../wire';

function printQueues(session: Session, queues: QueueInfo[]): void {
  if (session.output.isJson) for (const queue of queues) session.output.json(queueJson(queue));
  else printQueueTable(session.output, queues);
}

/** PauseQueue or ResumeQueue, then the queue as it now is. */
function addPauseCommand(queues: Command, name: 'pause' | 'resume', description: string): void {
  queues
    .command(name)
    .description(description)
    .argument('<queue>', 'the queue')
    .action((queue: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        const { operator } = session.connection;
        const answer = name === 'pause' ? await operator.pauseQueue({ queue }) : await operator.resumeQueue({ queue });
        if (answer.queue === undefined) throw new CliError('the server answered without the queue', ExitCode.failure);
        printQueues(session, [answer.queue]);
      }),
    );
}

/** `ojs queues ...`: list queues, their stats, pause and resume them. */
export function addQueueCommands(program: Command): void {
  const queues = program.command('queues').description('list queues, show their stats, pause and resume them');

  queues
    .command('list')
    .description('every queue that holds jobs or is paused, with its counts per state and its lag')
    .action((_options: unknown, command: Command) =>
      withSession(command, async (session) => {
        const all: QueueInfo[] = [];
        let pageToken = '';
        do {
          const page = await session.connection.operator.listQueues({ pageSize: 1000, pageToken });
          all.push(...page.queues);
          pageToken = page.nextPageToken;
        } while (pageToken !== '');
        printQueues(session, all);
      }),
    );

  queues
    .command('stats')
    .description("a queue's counts, lag and throughput per minute over the last hour")
    .argument('<queue>', 'the queue')
    .action((queue: string, _options: unknown, command: Command) =>
      withSession(command, async (session) => {
        const stats = await session.connection.operator.getQueueStats({ queue });
        const { output } = session;
        if (output.isJson) {
          output.json({ queue: stats.queue === undefined ? undefined : queueJson(stats.queue), minutes: toWire(stats.minutes) });
          return;
        }
        if (stats.queue !== undefined) printQueueTable(output, [stats.queue]);
        const busy = stats.minutes.filter((minute) => minute.completed + minute.failed + minute.discarded > 0);
        const sum = (pick: (m: (typeof busy)[number]) => number): string => String(busy.reduce((total, m) => total + pick(m), 0));
        output.line('');
        output.line(
          `last hour: ${sum((m) => m.completed)} completed, ${sum((m) => m.failed)} failed attempts, ${sum((m) => m.discarded)} discarded`,
        );
        if (busy.length === 0) return;
        output.table(
          ['MINUTE', 'COMPLETED', 'FAILED', 'DISCARDED'],
          busy.map((m) => [m.minute?.toISOString().slice(11, 16) ?? '-', String(m.completed), String(m.failed), String(m.discarded)]),
        );
      }),
    );

  addPauseCommand(queues, 'pause', 'stop deliveries from a queue on every replica (enqueues are still taken)');
  addPauseCommand(queues, 'resume', 'restart deliveries from a paused queue');
}
