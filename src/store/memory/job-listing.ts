import { isTerminal } from '../../domain/job-state-machine';
import type { JobState } from '../../domain/job';
import { listingKey, matchesFilter, type JobFilter, type JobQuery } from '../../domain/job-query';
import type { Page } from '../../domain/paging';
import { jobIdOfKey, type ListingIndexes } from './listing-indexes';
import type { JobSlot } from './memory-tables';

/** Exclusive key bounds of one state's listing; bounds are never keys themselves (a key has an id after its time). */
interface KeyRange {
  above?: string;
  below?: string;
}

/**
 * One page of the jobs `query` selects, in listing order: the states'
 * listings (of the query's queue, when it names one) merged by key, each
 * bounded by the query's times where its listing time is the filtered time,
 * and every job examined checked with matchesFilter. At most `limit` jobs
 * and `scanBudget` examined keys: the work is proportional to the page plus
 * what the filters skip, never to the listings' size. `nextAfter` is set
 * whenever a key remains.
 */
export function listPage(indexes: ListingIndexes, slotOf: (id: string) => JobSlot, query: JobQuery): Page<JobSlot> {
  const isNewest = query.order === 'newest';
  const heads = query.filter.states.flatMap((state) => {
    const keys = keysOf(indexes, state, query.filter, query.after, isNewest);
    const first = keys.next();
    return first.done === true ? [] : [{ key: first.value, keys }];
  });
  const items: JobSlot[] = [];
  let examined = 0;
  let last: string | undefined;
  while (heads.length > 0) {
    let pick = 0;
    for (let i = 1; i < heads.length; i++) {
      if (isNewest ? heads[i]!.key > heads[pick]!.key : heads[i]!.key < heads[pick]!.key) pick = i;
    }
    if (last !== undefined && (items.length >= query.limit || examined >= query.scanBudget)) return { items, nextAfter: last };
    const head = heads[pick]!;
    last = head.key;
    examined += 1;
    const slot = slotOf(jobIdOfKey(head.key));
    if (matchesFilter(slot.job, query.filter)) items.push(slot);
    const next = head.keys.next();
    if (next.done === true) heads.splice(pick, 1);
    else head.key = next.value;
  }
  return { items };
}

/** One state's keys in listing order after the cursor, within the range its listing time allows. */
function* keysOf(indexes: ListingIndexes, state: JobState, filter: JobFilter, after: string | undefined, isNewest: boolean) {
  const keys = indexes.keys(state, filter.queue);
  if (keys === undefined) return;
  const { above, below } = rangeOf(state, filter);
  if (isNewest) {
    const start = after === undefined || (below !== undefined && below < after) ? below : after;
    for (const key of keys.before(start)) {
      if (above !== undefined && key <= above) return;
      yield key;
    }
  } else {
    const start = after === undefined || (above !== undefined && above > after) ? above : after;
    for (const key of keys.after(start)) {
      if (below !== undefined && key >= below) return;
      yield key;
    }
  }
}

/**
 * The key range the filter's times give a state's listing: finished times
 * bound the finished states (listed by when they finished), created times
 * the states listed by creation; available jobs are listed by when they
 * became available, which no filter names.
 */
function rangeOf(state: JobState, filter: JobFilter): KeyRange {
  const [after, before] = isTerminal(state)
    ? [filter.finishedAfter, filter.finishedBefore]
    : state === 'available'
      ? [undefined, undefined]
      : [filter.createdAfter, filter.createdBefore];
  const range: KeyRange = {};
  // Inclusive times become exclusive keys: the bare time sorts before every key of that time.
  if (after !== undefined) range.above = listingKey(after, '');
  if (before !== undefined) range.below = listingKey(before + 1, '');
  return range;
}
