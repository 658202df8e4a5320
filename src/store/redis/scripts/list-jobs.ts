import type { Job } from '../../../domain/job';
import type { JobQuery } from '../../../domain/job-query';
import { readArray, readString, readStrings, unexpectedReply } from '../reply';
import { appendBatch, arg, declareScript } from '../script';
import { readJob } from './replies';

/** A page of a listing: the ids, the jobs when asked for, and where the next page starts. */
export interface ListedJobs {
  ids: string[];
  /** Empty unless the jobs were asked for. */
  jobs: Job[];
  nextAfter?: string;
}

/** One page of the jobs a query selects, in listing order (lua/list-jobs.lua): for listJobs and findJobIds. */
export const listJobsScript = declareScript({
  name: 'list-jobs',
  isReadOnly: true,
  encode: ({ query, withJobs }: { query: JobQuery; withJobs: boolean }) => {
    const { filter } = query;
    return appendBatch(
      [
        arg.id(query.order, 'order'),
        query.after === undefined ? '' : arg.id(query.after, 'after'),
        arg.int(query.limit, 'limit'),
        arg.int(query.scanBudget, 'scanBudget'),
        arg.flag(withJobs),
        arg.int(query.maxBytes, 'maxBytes'),
        arg.text(filter.queue ?? '', 'queue'),
        arg.text(filter.type ?? '', 'type'),
        arg.text(filter.errorType ?? '', 'errorType'),
        filter.deadLetter === undefined ? '' : arg.flag(filter.deadLetter),
        arg.optionalInt(filter.createdAfter, 'createdAfter'),
        arg.optionalInt(filter.createdBefore, 'createdBefore'),
        arg.optionalInt(filter.finishedAfter, 'finishedAfter'),
        arg.optionalInt(filter.finishedBefore, 'finishedBefore'),
        arg.text(filter.schedule ?? '', 'schedule'),
        arg.text(filter.workflow ?? '', 'workflow'),
      ],
      ['state'],
      filter.states,
      (state) => ({ state: arg.id(state, 'state') }),
    );
  },
  decode(reply, { withJobs }): ListedJobs {
    const [ids, hashes, nextAfter] = readArray(reply, 'job listing');
    const listed: ListedJobs = {
      ids: readStrings(ids, 'listed job ids'),
      jobs: readArray(hashes, 'listed jobs').map((hash) => readJob(hash) ?? unexpectedReply('listed job', hash)),
    };
    if (withJobs && listed.jobs.length !== listed.ids.length) unexpectedReply('listed jobs (one per id)', reply);
    const next = readString(nextAfter, 'next after');
    if (next !== '') listed.nextAfter = next;
    return listed;
  },
});
