import { isTerminal } from '../../domain/job-state-machine';
import type { JobState } from '../../domain/job';
import {
  availableListingKey,
  listingKey,
  matchesFilter,
  parseAvailableListingKey,
  RUN_RANK_END,
  type JobFilter,
  type JobQuery,
} from '../../domain/job-query';
import type { Page } from '../../domain/paging';
import { jobIdOfKey, TIME_LISTED_STATES } from './listing-indexes';
import type { JobSlot, MemoryTables, ReadyEntry } from './memory-tables';

/** Exclusive key bounds of one state's listing; bounds are never keys themselves (a key has an id after its time). */
interface KeyRange {
  above?: string;
  below?: string;
}

/** One step of a listing: a job examined under its key, or (no slot) a queue passed without an available job to list. */
interface Step {
  key: string;
  slot?: JobSlot;
}

/**
 * One page of the jobs `query` selects, in listing order (domain
 * job-query.ts): oldest first, the available jobs in run order, queue by
 * queue, then the listings of the other states (of the query's queue where
 * a state has one per queue) merged by key, each bounded by the query's
 * times where its listing time is the filtered time; newest first, the
 * reverse. Every job examined is checked with matchesFilter. At most
 * `limit` jobs, and `scanBudget` jobs examined and queues passed without a
 * job to list: the work is proportional to the page plus what the filters
 * skip, never to the listings' size. `nextAfter` is set whenever a key
 * remains.
 */
export function listPage(tables: MemoryTables, query: JobQuery): Page<JobSlot> {
  const items: JobSlot[] = [];
  let examined = 0;
  let last: string | undefined;
  for (const step of stepsOf(tables, query)) {
    if (last !== undefined && (items.length >= query.limit || examined >= query.scanBudget)) return { items, nextAfter: last };
    last = step.key;
    examined += 1;
    if (step.slot !== undefined && matchesFilter(step.slot.job, query.filter)) items.push(step.slot);
  }
  return { items };
}

/** The listing's steps after the cursor: the available segment and the merged one, in the order's sequence. */
function* stepsOf(tables: MemoryTables, query: JobQuery): IterableIterator<Step> {
  const { filter, after } = query;
  const isNewest = query.order === 'newest';
  // An available key is a position in the available segment, which comes before every time key (oldest first).
  const position = after === undefined ? undefined : parseAvailableListingKey(after);
  const timeAfter = position === undefined ? after : undefined;
  const states = filter.states.filter((state) => isSelectable(state, filter));
  const timed = states.filter((state) => state !== 'available');
  const hasAvailable = states.includes('available');
  if (isNewest) {
    if (position === undefined) yield* mergedSteps(tables, timed, filter, timeAfter, true);
    if (hasAvailable) yield* availableSteps(tables, filter.queue, position, true);
  } else {
    if (hasAvailable && (after === undefined || position !== undefined)) yield* availableSteps(tables, filter.queue, position, false);
    yield* mergedSteps(tables, timed, filter, timeAfter, false);
  }
}

/** Whether the filter can select jobs of `state` at all (a dead-letter filter only discarded ones, finished times only finished ones). */
function isSelectable(state: JobState, filter: JobFilter): boolean {
  if (filter.deadLetter !== undefined && state !== 'discarded') return false;
  return isTerminal(state) || (filter.finishedAfter === undefined && filter.finishedBefore === undefined);
}

/**
 * The available jobs after `position`, queue by queue in name order (the
 * query's queue only, when it names one), each in run order; newest first,
 * all reversed. A queue without a job past the position is a step of its
 * own, keyed past the whole queue, so that passing many empty queues counts
 * against the scan budget and a page can end between them.
 */
function* availableSteps(
  tables: MemoryTables,
  queue: string | undefined,
  position: { queue: string; rank: number } | undefined,
  isNewest: boolean,
): IterableIterator<Step> {
  for (const name of queuesFrom(tables, queue, position?.queue, isNewest)) {
    const start = name === position?.queue ? position.rank : isNewest ? RUN_RANK_END : 0;
    const fifo = tables.ready.get(name);
    const entries = fifo === undefined ? [] : isNewest ? fifo.before(start, rankOf) : fifo.after(start, rankOf);
    let isEmpty = true;
    for (const entry of entries) {
      const slot = tables.current(entry);
      if (slot === undefined) continue;
      isEmpty = false;
      yield { key: slot.key, slot };
    }
    if (isEmpty) yield { key: availableListingKey(name, isNewest ? 0 : RUN_RANK_END) };
  }
}

const rankOf = (entry: ReadyEntry): number => entry.rank;

/** The queues whose available jobs come at or after the cursor's queue `from`, in the order's direction. */
function* queuesFrom(
  tables: MemoryTables,
  queue: string | undefined,
  from: string | undefined,
  isNewest: boolean,
): IterableIterator<string> {
  if (queue !== undefined) {
    if (from === undefined || from === queue || (isNewest ? queue < from : queue > from)) yield queue;
    return;
  }
  if (from !== undefined && tables.queueNames.has(from)) yield from;
  yield* isNewest ? tables.queueNames.before(from) : tables.queueNames.after(from);
}

/** The listings of the states listed by time, merged by key after the cursor. */
function* mergedSteps(
  tables: MemoryTables,
  states: readonly JobState[],
  filter: JobFilter,
  after: string | undefined,
  isNewest: boolean,
): IterableIterator<Step> {
  const heads = states.flatMap((state) => {
    const keys = keysOf(tables, state, filter, after, isNewest);
    const first = keys.next();
    return first.done === true ? [] : [{ key: first.value, keys }];
  });
  while (heads.length > 0) {
    let pick = 0;
    for (let i = 1; i < heads.length; i++) {
      if (isNewest ? heads[i]!.key > heads[pick]!.key : heads[i]!.key < heads[pick]!.key) pick = i;
    }
    const head = heads[pick]!;
    yield { key: head.key, slot: tables.jobs.get(jobIdOfKey(head.key))! };
    const next = head.keys.next();
    if (next.done === true) heads.splice(pick, 1);
    else head.key = next.value;
  }
}

/** One state's keys in listing order after the cursor, within the range its listing time allows. */
function* keysOf(tables: MemoryTables, state: JobState, filter: JobFilter, after: string | undefined, isNewest: boolean) {
  if (!TIME_LISTED_STATES.includes(state)) return;
  const keys = tables.listings.keys(state, filter.queue);
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
 * the states listed by creation. Active jobs are listed by when they
 * started, which no filter names.
 */
function rangeOf(state: JobState, filter: JobFilter): KeyRange {
  const [after, before] = isTerminal(state)
    ? [filter.finishedAfter, filter.finishedBefore]
    : state === 'active'
      ? [undefined, undefined]
      : [filter.createdAfter, filter.createdBefore];
  const range: KeyRange = {};
  // Inclusive times become exclusive keys: the bare time sorts before every key of that time.
  if (after !== undefined) range.above = listingKey(after, '');
  if (before !== undefined) range.below = listingKey(before + 1, '');
  return range;
}
