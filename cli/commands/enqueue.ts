import type { Command } from 'commander';
import { OnExhaustion, type Job } from '../../gen/ojs/server/v1/job';
import { CliError, ExitCode, usageError } from '../exit-codes';
import { parseTime } from '../job-filter';
import { jobJson, jobStateName } from '../job-view';
import { withSession } from '../session';

interface EnqueueOptions {
  queue?: string;
  priority?: string;
  id?: string;
  meta?: string;
  at?: string;
  timeout?: string;
  maxAttempts?: string;
  deadLetter?: boolean;
  pending?: boolean;
  unique?: boolean;
  uniqueKeys?: string;
  uniqueArgsKeys?: string;
  uniqueMetaKeys?: string;
  uniquePeriod?: string;
  uniqueStates?: string;
  uniqueOnConflict?: string;
}

function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${flag}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function parseInteger(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value)) throw usageError(`${flag}: "${text}" is not a whole number`);
  return value;
}

/** A comma-separated flag's names; none when the flag is absent. */
const names = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

/**
 * The unique policy the --unique* flags describe (any of them asks for one;
 * each left out takes the server's default); the server checks the names.
 */
function uniquePolicy(options: EnqueueOptions): Partial<Pick<Job, 'unique'>> {
  const flags = [options.uniqueKeys, options.uniqueArgsKeys, options.uniqueMetaKeys, options.uniquePeriod, options.uniqueStates];
  if (options.unique !== true && options.uniqueOnConflict === undefined && flags.every((flag) => flag === undefined)) return {};
  return {
    unique: {
      keys: names(options.uniqueKeys),
      argsKeys: names(options.uniqueArgsKeys),
      metaKeys: names(options.uniqueMetaKeys),
      period: options.uniquePeriod ?? '',
      states: names(options.uniqueStates),
      onConflict: options.uniqueOnConflict ?? '',
    },
  };
}

/** The envelope the flags describe; the server checks the rest (type and queue syntax, limits). */
function envelope(type: string, argsJson: string | undefined, options: EnqueueOptions, nowMs: number): Partial<Job> {
  const args = argsJson === undefined ? [] : parseJson('args', argsJson);
  if (!Array.isArray(args)) throw usageError('args: a JSON array of the positional arguments, such as \'["ada@example.com", 3]\'');
  const meta = options.meta === undefined ? undefined : parseJson('--meta', options.meta);
  if (meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))) throw usageError('--meta: a JSON object');
  const maxAttempts = parseInteger('--max-attempts', options.maxAttempts);
  return {
    type,
    args,
    queue: options.queue ?? '',
    id: options.id ?? '',
    priority: parseInteger('--priority', options.priority) ?? 0,
    timeout: parseInteger('--timeout', options.timeout) ?? 0,
    scheduledAt: parseTime('--at', options.at, nowMs, 1),
    ...(meta === undefined ? {} : { meta: Object.fromEntries(Object.entries(meta)) }),
    ...uniquePolicy(options),
    ...(maxAttempts === undefined && options.deadLetter !== true
      ? {}
      : {
          retry: {
            maxAttempts,
            nonRetryableErrors: [],
            onExhaustion: options.deadLetter === true ? OnExhaustion.ON_EXHAUSTION_DEAD_LETTER : OnExhaustion.ON_EXHAUSTION_UNSPECIFIED,
          },
        }),
  };
}

/** `ojs enqueue <type> [args]`. */
export function addEnqueueCommand(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue a job and print its id (or, with --json, its envelope)')
    .argument('<type>', 'the job type, such as email.send')
    .argument('[args]', 'the positional arguments as a JSON array, such as \'["ada@example.com"]\'')
    .option('-q, --queue <queue>', 'the queue (default: "default")')
    .option('-p, --priority <n>', 'higher runs first, -1000 to 1000')
    .option('--id <uuid>', 'a UUIDv7 of your own, which makes the enqueue idempotent')
    .option('--meta <json>', 'metadata, a JSON object')
    .option('--at <time>', 'run at an RFC 3339 time, or after a duration such as 10m')
    .option('--timeout <seconds>', 'longest time one attempt may run')
    .option('--max-attempts <n>', 'attempts in all, including the first')
    .option('--dead-letter', 'put the job in the dead letter when its attempts run out')
    .option('--pending', 'stage the job as pending until it is activated')
    .option('--unique', 'refuse a duplicate of a waiting or active job of the same type (the defaults of the --unique-* flags)')
    .option('--unique-keys <dimensions>', 'what makes a duplicate, comma-separated: type (always), queue, args, meta')
    .option('--unique-args-keys <keys>', 'with args: only these keys of the first argument, comma-separated')
    .option('--unique-meta-keys <keys>', 'with meta (then required): these meta keys, comma-separated')
    .option('--unique-period <duration>', 'an ISO 8601 duration, such as PT1H, after which a job stops counting')
    .option('--unique-states <states>', 'the states a duplicate counts in, comma-separated (default: waiting and active)')
    .option('--unique-on-conflict <policy>', 'reject (the default), ignore (print the existing job) or replace (cancel it)')
    .action((type: string, argsJson: string | undefined, options: EnqueueOptions, command: Command) =>
      withSession(command, async (session) => {
        const job = envelope(type, argsJson, options, session.nowMs());
        const { jobs, outcomes } = await session.connection.jobs.enqueue({ jobs: [job], pending: options.pending === true });
        const stored = jobs[0];
        if (stored === undefined) throw new CliError('the server answered without the job', ExitCode.failure);
        if (session.output.isJson) session.output.json(jobJson(stored));
        else session.output.line(`${stored.id}  ${stored.type} on ${stored.queue}, ${jobStateName(stored.state)}`);
        // What the unique policy did, beside the result so that stdout stays the job.
        if (outcomes[0]?.deduplicated === true) session.output.note(`deduplicated: job ${stored.id} already holds the uniqueness key`);
        const replaced = outcomes[0]?.replacedJobId ?? '';
        if (replaced !== '') session.output.note(`replaced job ${replaced}, now cancelled`);
      }),
    );
}
