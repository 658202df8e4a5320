import type { Command } from 'commander';
import type { QueueInfo, QueueLimits } from '../../gen/ojs/server/v1/operator_service';
import { parseDuration } from '../../lib/duration';
import { CliError, ExitCode, usageError } from '../exit-codes';
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

interface LimitOptions {
  rate?: string;
  maxActive?: string;
  clear?: boolean;
}

/** The limits `ojs queues limit` asks for; undefined for --clear. The server checks their bounds. */
function limitsFrom(options: LimitOptions): QueueLimits | undefined {
  const isSetting = options.rate !== undefined || options.maxActive !== undefined;
  if (options.clear === true) {
    if (isSetting) throw usageError('--clear: give it alone, without --rate or --max-active');
    return undefined;
  }
  if (!isSetting) throw usageError('give --rate, --max-active or both, or --clear');
  const limits: QueueLimits = { rate: undefined };
  if (options.maxActive !== undefined) {
    const maxActive = Number(options.maxActive);
    if (!Number.isInteger(maxActive)) throw usageError(`--max-active: "${options.maxActive}" is not a whole number`);
    limits.maxActive = maxActive;
  }
  if (options.rate !== undefined) {
    const [, limit, period] = /^(\d+)\/(.+)$/.exec(options.rate.trim()) ?? [];
    const periodMs = period === undefined ? undefined : parseDuration(period);
    if (limit === undefined || periodMs === undefined)
      throw usageError(`--rate: "${options.rate}" is not <starts>/<period>, such as 20/500ms`);
    limits.rate = { limit: Number(limit), period: { seconds: Math.floor(periodMs / 1_000), nanos: (periodMs % 1_000) * 1_000_000 } };
  }
  return limits;
}

/** `ojs queues ...`: list queues, their stats, pause and resume them, set their limits. */
export function addQueueCommands(program: Command): void {
  const queues = program.command('queues').description('list queues, show their stats, pause and resume them, and limit them');

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

  queues
    .command('limit')
    .description("set (replacing them) or clear a queue's fleet-wide limits, which every replica's workers together obey")
    .argument('<queue>', 'the queue')
    .option('--rate <starts/period>', 'at most this many starts in any window of the period, such as 20/500ms or 1000/1h')
    .option('--max-active <n>', 'at most this many of its jobs active at once (0 delivers none)')
    .option('--clear', 'remove the limits')
    .action((queue: string, options: LimitOptions, command: Command) =>
      withSession(command, async (session) => {
        const limits = limitsFrom(options);
        const answer = await session.connection.operator.setQueueLimits({ queue, ...(limits === undefined ? {} : { limits }) });
        if (answer.queue === undefined) throw new CliError('the server answered without the queue', ExitCode.failure);
        printQueues(session, [answer.queue]);
      }),
    );
}
