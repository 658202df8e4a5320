import type { DeepPartial, Job } from '../../gen/ojs/server/v1/job';
import { ListOrder, type JobFilter } from '../../gen/ojs/server/v1/operator_service';
import type { Clients } from './test-server';

/** The ids of one ListJobs page of `filter`, and its next page token. */
export async function listJobIds(
  clients: Clients,
  filter: DeepPartial<JobFilter>,
  options: { order?: ListOrder; pageSize?: number; pageToken?: string } = {},
): Promise<{ ids: string[]; jobs: Job[]; nextPageToken: string }> {
  const { jobs, nextPageToken } = await clients.operator.listJobs({
    filter,
    order: options.order ?? ListOrder.LIST_ORDER_UNSPECIFIED,
    pageSize: options.pageSize ?? 0,
    pageToken: options.pageToken ?? '',
  });
  return { ids: jobs.map((j) => j.id), jobs, nextPageToken };
}

/**
 * Every page of a listing, following the tokens to the end (at most
 * `maxPages`, so that a token that never ends fails the test rather than
 * hanging it). `between` runs after each page with the ids listed so far, to
 change jobs mid-listing.
 */
export async function listAllJobIds(
  clients: Clients,
  filter: DeepPartial<JobFilter>,
  options: { order?: ListOrder; pageSize?: number; maxPages?: number; between?: (listed: readonly string[]) => Promise<void> } = {},
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pageToken = '';
  for (let pages = 1; pages <= (options.maxPages ?? 100); pages++) {
    const page = await listJobIds(clients, filter, { ...options, pageToken });
    ids.push(...page.ids);
    if (page.nextPageToken === '') return { ids, pages };
    pageToken = page.nextPageToken;
    await options.between?.(ids);
  }
  throw new Error(`the listing did not end within ${options.maxPages ?? 100} pages (listed ${ids.length} jobs)`);
}
