import { checkJobFilter, JOB_SCAN_BUDGET, type JobFilterInput, type ListOrder } from '../domain/job-query';
import type { Job } from '../domain/job';
import { DELIVERY_BUDGET_BYTES } from '../domain/limits';
import { pageLimit, type Page } from '../domain/paging';
import type { Principal } from '../domain/principal';
import type { AppContext } from './app-context';
import { scopedFilterQueue } from './caller-scope';

/** A listing request as the transport reads it: the cursor is the store's listing key (the transport makes it opaque). */
export interface ListJobsRequest {
  filter: JobFilterInput;
  order: ListOrder;
  pageSize: number;
  after?: string;
}

/**
 * Job listings for operators (ojs-admin-api 7, ojs-dead-letter 9): one page
 * of the jobs a filter selects, within one gRPC message. A queue-scoped
 * caller lists one of its queues at a time (see scopedFilterQueue).
 */
export class JobListing {
  constructor(private readonly ctx: AppContext) {}

  async list(caller: Principal, request: ListJobsRequest): Promise<Page<Job>> {
    const filter = checkJobFilter(request.filter);
    const queue = scopedFilterQueue(caller, 'filter.queue', filter.queue ?? '');
    const query = {
      filter: queue === '' ? filter : { ...filter, queue },
      order: request.order,
      limit: pageLimit(request.pageSize),
      maxBytes: DELIVERY_BUDGET_BYTES,
      scanBudget: JOB_SCAN_BUDGET,
      ...(request.after === undefined ? {} : { after: request.after }),
    };
    return this.ctx.store.listJobs(query);
  }
}
