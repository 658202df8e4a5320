import { Option, type Command } from 'commander';
import { parseDuration } from '../lib/duration';
import { JobState } from '../gen/ojs/server/v1/job';
import type { JobFilter } from '../gen/ojs/server/v1/operator_service';
import { usageError } from './exit-codes';
import { JOB_STATES_BY_NAME } from './job-view';

/** The flags that narrow a selection of jobs, as commander parses them. */
export interface JobFilterOptions {
  state?: string[];
  queue?: string;
  type?: string;
  schedule?: string;
  workflow?: string;
  errorType?: string;
  createdAfter?: string;
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
}

const TIME_HELP = 'an RFC 3339 time, or a duration before now such as 30m or 2d';

/** Adds the filter flags to a command; `withStates` for listings that may name states. */
export function addJobFilterOptions(command: Command, withStates: boolean): Command {
  if (withStates) command.addOption(new Option('--state <state...>', 'only jobs in these states').choices([...JOB_STATES_BY_NAME.keys()]));
  return command
    .option('-q, --queue <queue>', 'only jobs of this queue')
    .option('-t, --type <type>', 'only jobs of this type')
    .option('--schedule <name>', 'only jobs made by this cron schedule')
    .option('--workflow <id>', 'only jobs of this workflow')
    .option('--error-type <type>', 'only jobs whose last error has this type')
    .option('--created-after <time>', `only jobs created after ${TIME_HELP}`)
    .option('--created-before <time>', `only jobs created before ${TIME_HELP}`)
    .option('--finished-after <time>', `only jobs finished after ${TIME_HELP}`)
    .option('--finished-before <time>', `only jobs finished before ${TIME_HELP}`);
}

/** Whether any flag of addJobFilterOptions narrows the selection. */
export function isNarrowed(options: JobFilterOptions): boolean {
  return [
    options.queue,
    options.type,
    options.schedule,
    options.workflow,
    options.errorType,
    options.createdAfter,
    options.createdBefore,
    options.finishedAfter,
    options.finishedBefore,
  ].some((value) => value !== undefined);
}

/** The JobFilter the flags describe. */
export function jobFilter(options: JobFilterOptions, nowMs: number): JobFilter {
  return {
    states: (options.state ?? []).map((name) => JOB_STATES_BY_NAME.get(name) ?? JobState.JOB_STATE_UNSPECIFIED),
    queue: options.queue ?? '',
    type: options.type ?? '',
    schedule: options.schedule ?? '',
    workflowId: options.workflow ?? '',
    errorType: options.errorType ?? '',
    createdAfter: parseTime('--created-after', options.createdAfter, nowMs),
    createdBefore: parseTime('--created-before', options.createdBefore, nowMs),
    finishedAfter: parseTime('--finished-after', options.finishedAfter, nowMs),
    finishedBefore: parseTime('--finished-before', options.finishedBefore, nowMs),
  };
}

/**
 * A point in time an operator wrote: an RFC 3339 time, or a duration that
 * long before now ("2h"). A duration after now, for scheduling, is
 * `direction` 1.
 */
export function parseTime(flag: string, text: string | undefined, nowMs: number, direction: 1 | -1 = -1): Date | undefined {
  if (text === undefined) return undefined;
  const durationMs = parseDuration(text);
  if (durationMs !== undefined) return new Date(nowMs + direction * durationMs);
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw usageError(`${flag}: "${text}" is neither an RFC 3339 time nor a duration such as 30m`);
  return new Date(at);
}
