import type { Command } from 'commander';
import { JobState } from '../../gen/ojs/server/v1/job';
import type { BulkResult, JobFilter, JobSelection } from '../../gen/ojs/server/v1/operator_service';
import { runBulk, type BulkTarget } from '../bulk';
import { usageError } from '../exit-codes';
import { addJobFilterOptions, isNarrowed, jobFilter, type JobFilterOptions } from '../job-filter';
import { addPagingOptions, listJobs, type PagingOptions } from '../job-listing';
import { withSession, type Session } from '../session';

/** The dead letter set (L1-DLQ-002): discarded jobs marked dead-lettered, narrowed by the flags. */
function deadLetterFilter(options: JobFilterOptions, nowMs: number): JobFilter {
  return { ...jobFilter(options, nowMs), states: [JobState.JOB_STATE_DISCARDED], deadLetter: true };
}

interface BulkOptions extends JobFilterOptions {
  dryRun?: boolean;
  all?: boolean;
}

/**
 * Jobs by id, or the dead letter jobs the flags select. Selecting the whole
 * dead letter takes --all, so that a bare `ojs dead-letter delete` deletes nothing.
 */
function bulkTarget(ids: string[], options: BulkOptions, nowMs: number): BulkTarget {
  if (ids.length > 0) {
    if (isNarrowed(options) || options.all === true) throw usageError('name job ids, or select with filter flags or --all; not both');
    return { ids };
  }
  if (!isNarrowed(options) && options.all !== true)
    throw usageError('name job ids, or select with filter flags (--queue, --type, --error-type...), or --all for every dead letter job');
  return { filter: deadLetterFilter(options, nowMs) };
}

function addBulkCommand(
  deadLetter: Command,
  name: string,
  description: string,
  done: string,
  call: (session: Session, selection: JobSelection) => Promise<{ result?: BulkResult | undefined }>,
): void {
  addJobFilterOptions(deadLetter.command(name).description(description), false)
    .argument('[ids...]', 'job ids (or select with the filter flags)')
    .option('--all', 'every job in the dead letter')
    .option('--dry-run', 'count the jobs it would change, change nothing')
    .action((ids: string[], options: BulkOptions, command: Command) =>
      withSession(command, (session) =>
        runBulk(
          session,
          { done, call: (selection) => call(session, selection) },
          bulkTarget(ids, options, session.nowMs()),
          options.dryRun === true,
        ),
      ),
    );
}

/** `ojs dead-letter ...`: list, retry and delete dead-lettered jobs. */
export function addDeadLetterCommands(program: Command): void {
  const deadLetter = program.command('dead-letter').description('list, retry and delete the jobs in the dead letter');

  addPagingOptions(addJobFilterOptions(deadLetter.command('list').description('list dead letter jobs, newest first'), false)).action(
    (options: JobFilterOptions & PagingOptions, command: Command) =>
      withSession(command, (session) => listJobs(session, deadLetterFilter(options, session.nowMs()), options)),
  );
  addBulkCommand(
    deadLetter,
    'retry',
    'make dead letter jobs available again (attempts and errors reset)',
    'retried',
    (session, selection) => session.connection.operator.retryJobs({ selection }),
  );
  addBulkCommand(deadLetter, 'delete', 'delete dead letter jobs and every trace of them', 'deleted', (session, selection) =>
    session.connection.operator.deleteJobs({ selection }),
  );
}
