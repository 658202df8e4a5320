import type { Command } from 'commander';
import type { Job } from '../gen/ojs/server/v1/job';
import { ListOrder, type JobFilter } from '../gen/ojs/server/v1/operator_service';
import { usageError } from './exit-codes';
import { jobJson, printJobTable } from './job-view';
import type { Session } from './session';

/** The paging flags of a listing. */
export interface PagingOptions {
  limit: string;
  pageToken?: string;
  all?: boolean;
  oldestFirst?: boolean;
}

/** Adds --limit, --page-token, --all and --oldest-first. */
export function addPagingOptions(command: Command): Command {
  return command
    .option('-n, --limit <count>', 'most jobs a page holds (at most 1000)', '50')
    .option('--page-token <token>', 'carry on from where the previous page stopped')
    .option('--all', 'every page, not only the first')
    .option('--oldest-first', 'oldest first (the default is newest first)');
}

/**
 * Lists the jobs `filter` selects: one page, or every page with --all. A
 * table (or one JSON object per job); where the next page starts is noted on
 * stderr, so that stdout stays the jobs.
 */
export async function listJobs(session: Session, filter: JobFilter, paging: PagingOptions): Promise<void> {
  const pageSize = Number(paging.limit);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw usageError('--limit: a whole number from 1 to 1000');
  const order = paging.oldestFirst === true ? ListOrder.LIST_ORDER_OLDEST_FIRST : ListOrder.LIST_ORDER_NEWEST_FIRST;
  const jobs: Job[] = [];
  let pageToken = paging.pageToken ?? '';
  do {
    const page = await session.connection.operator.listJobs({ filter, order, pageSize, pageToken });
    if (session.output.isJson) for (const job of page.jobs) session.output.json(jobJson(job));
    else jobs.push(...page.jobs);
    pageToken = page.nextPageToken;
  } while (paging.all === true && pageToken !== '');
  if (!session.output.isJson) printJobTable(session.output, jobs, session.nowMs());
  if (pageToken !== '') session.output.note(`more jobs may follow: --page-token ${pageToken}`);
}
