import type { Command } from 'commander';
import { isAbortError } from 'abort-controller-x';
import { parseDuration } from '../../lib/duration';
import type { JobEvent } from '../../gen/ojs/server/v1/operator_service';
import { usageError } from '../exit-codes';
import { eventJson, printEvent } from '../fleet-view';
import { withSession, type Session } from '../session';

interface TailOptions {
  follow?: boolean;
  after?: string;
  type?: string[];
  queue?: string[];
  jobType?: string[];
  job?: string[];
  heartbeats?: boolean;
  limit?: string;
  idle: string;
}

/**
 * Prints events until it should stop: after --limit events, when no event
 * came for --idle (without --follow: the backlog after --after is written),
 * or when interrupted. Returns the id of the last event printed.
 */
async function tail(session: Session, options: TailOptions): Promise<string | undefined> {
  const limit = options.limit === undefined ? undefined : Number(options.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw usageError('--limit: a whole number from 1');
  const idleMs = parseDuration(options.idle);
  if (idleMs === undefined) throw usageError(`--idle: "${options.idle}" is not a duration such as 2s`);
  const stop = new AbortController();
  const stopNow = (): void => stop.abort();
  session.signal.addEventListener('abort', stopNow, { once: true });
  let idleTimer: NodeJS.Timeout | undefined;
  const restartIdleTimer = (): void => {
    if (options.follow === true) return;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(stopNow, idleMs);
  };
  let lastId: string | undefined;
  let count = 0;
  try {
    restartIdleTimer();
    const stream = session.connection.operator.watchEvents(
      {
        types: options.type ?? [],
        queues: options.queue ?? [],
        jobTypes: options.jobType ?? [],
        jobIds: options.job ?? [],
        after: options.after ?? '',
        includeHeartbeats: options.heartbeats === true,
      },
      { signal: stop.signal },
    );
    for await (const { event } of stream) {
      // An empty message is a keepalive: it says the stream is alive, not that anything happened.
      if (event === undefined) continue;
      print(session, event);
      lastId = event.id;
      count += 1;
      if (limit !== undefined && count >= limit) break;
      restartIdleTimer();
    }
  } catch (error) {
    if (!isAbortError(error)) throw error;
  } finally {
    clearTimeout(idleTimer);
    session.signal.removeEventListener('abort', stopNow);
    stop.abort();
  }
  return lastId;
}

function print(session: Session, event: JobEvent): void {
  if (session.output.isJson) session.output.json(eventJson(event));
  else printEvent(session.output, event);
}

/** `ojs events tail`: lifecycle events as they happen, resumable by event id. */
export function addEventCommands(program: Command): void {
  const events = program.command('events').description('watch lifecycle events');

  events
    .command('tail')
    .description(
      'print lifecycle events, oldest first. With --after, first every event recorded after that one. ' +
        'Without --follow it stops when no event came for --idle. On stderr it ends with the id of the last ' +
        'event printed, to resume from with --after.',
    )
    .option('-f, --follow', 'keep printing events as they happen, until interrupted')
    .option('--after <event-id>', 'resume after this event (the last id a previous tail printed)')
    .option('--type <type...>', 'only these event types, or families of them ("job.*")')
    .option('-q, --queue <queue...>', 'only events of jobs in these queues')
    .option('--job-type <type...>', 'only events of jobs of these types')
    .option('--job <id...>', 'only events of these jobs')
    .option('--heartbeats', 'also job and worker heartbeats (live only, never replayed)')
    .option('-n, --limit <count>', 'stop after this many events')
    .option('--idle <duration>', 'without --follow: stop when no event came for this long', '2s')
    .action((options: TailOptions, command: Command) =>
      withSession(
        command,
        async (session) => {
          const lastId = await tail(session, options);
          if (lastId !== undefined) session.output.note(`last event id: ${lastId} (resume with --after ${lastId})`);
        },
        { isInterruptible: true },
      ),
    );
}
