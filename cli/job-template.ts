import type { Command } from 'commander';
import { OnExhaustion, type Job } from '../gen/ojs/server/v1/job';
import { usageError } from './exit-codes';

/**
 * The flags that describe a job apart from its id and its time: what
 * `enqueue` sends, and what a cron schedule's ticks enqueue (`schedules add`).
 */
export interface JobTemplateOptions {
  queue?: string;
  priority?: string;
  meta?: string;
  timeout?: string;
  maxAttempts?: string;
  deadLetter?: boolean;
  unique?: boolean;
  uniqueKeys?: string;
  uniqueArgsKeys?: string;
  uniqueMetaKeys?: string;
  uniquePeriod?: string;
  uniqueStates?: string;
  uniqueOnConflict?: string;
}

/** Adds the flags of JobTemplateOptions to a command. */
export function addJobTemplateOptions(command: Command): Command {
  return command
    .option('-q, --queue <queue>', 'the queue (default: "default")')
    .option('-p, --priority <n>', 'higher runs first, -1000 to 1000')
    .option('--meta <json>', 'metadata, a JSON object')
    .option('--timeout <seconds>', 'longest time one attempt may run')
    .option('--max-attempts <n>', 'attempts in all, including the first')
    .option('--dead-letter', 'put the job in the dead letter when its attempts run out')
    .option('--unique', 'refuse a duplicate of a waiting or active job of the same type (the defaults of the --unique-* flags)')
    .option('--unique-keys <dimensions>', 'what makes a duplicate, comma-separated: type (always), queue, args, meta')
    .option('--unique-args-keys <keys>', 'with args: only these keys of the first argument, comma-separated')
    .option('--unique-meta-keys <keys>', 'with meta (then required): these meta keys, comma-separated')
    .option('--unique-period <duration>', 'an ISO 8601 duration, such as PT1H, after which a job stops counting')
    .option('--unique-states <states>', 'the states a duplicate counts in, comma-separated (default: waiting and active)')
    .option('--unique-on-conflict <policy>', 'reject (the default), ignore (print the existing job) or replace (cancel it)');
}

/** The positional arguments `flag` gives as JSON text: an array; none when the flag is absent. */
export function parseArgs(flag: string, text: string | undefined): unknown[] {
  const args = text === undefined ? [] : parseJson(flag, text);
  if (!Array.isArray(args)) throw usageError(`${flag}: a JSON array of the positional arguments, such as '["ada@example.com", 3]'`);
  return args;
}

/** The job of `type` with `args` that the flags describe; the server checks the rest (type and queue syntax, limits). */
export function jobTemplate(type: string, args: unknown[], options: JobTemplateOptions): Partial<Job> {
  const meta = options.meta === undefined ? undefined : parseJson('--meta', options.meta);
  if (meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))) throw usageError('--meta: a JSON object');
  const maxAttempts = parseInteger('--max-attempts', options.maxAttempts);
  return {
    type,
    args,
    queue: options.queue ?? '',
    priority: parseInteger('--priority', options.priority) ?? 0,
    timeout: parseInteger('--timeout', options.timeout) ?? 0,
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
function uniquePolicy(options: JobTemplateOptions): Partial<Pick<Job, 'unique'>> {
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
