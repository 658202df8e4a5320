import { JOB_STATES, type JobState } from '../../domain/job';
import { SortedKeySet } from './sorted-key-set';

/** Digits of the time part of a listing key (domain listingKey pads times to 15). */
const KEY_TIME_DIGITS = 15;

/** The job id a listing key names. */
export function jobIdOfKey(key: string): string {
  return key.slice(KEY_TIME_DIGITS + 1);
}

/**
 * The states whose jobs are listed from these indexes: all but available,
 * whose listing is its queues' run order (the ready queues).
 */
export const TIME_LISTED_STATES: readonly JobState[] = JOB_STATES.filter((state) => state !== 'available');

/**
 * States with an index per queue besides the one of all queues. Active
 * jobs have the one only: they are few (bounded by the workers'
 * concurrency), and a claim or a settlement then changes one index, not two.
 */
const QUEUE_INDEXED: ReadonlySet<JobState> = new Set(TIME_LISTED_STATES.filter((state) => state !== 'active'));

/** Whether a state's jobs have an index per queue (else a queue filter is applied while scanning). */
export function isQueueIndexed(state: JobState): boolean {
  return QUEUE_INDEXED.has(state);
}

/**
 * The job listings of the states listed by time: per state, and per state
 * and queue (but for active jobs), the listing keys of the jobs in that
 * state, in key order. Entries are exact (a change removes the job's old
 * key and adds its new one), so a page reads only live keys and deleting a
 * job leaves nothing behind. A queue's set goes when it empties, so the
 * listings cost nothing for queues that hold no jobs.
 */
export class ListingIndexes {
  // Maps rather than records: a lookup by a variable state is then a hash lookup, not a keyed property access.
  private readonly byState = new Map<JobState, SortedKeySet>(TIME_LISTED_STATES.map((state) => [state, new SortedKeySet()]));
  private readonly byQueue = new Map<JobState, Map<string, SortedKeySet>>(
    TIME_LISTED_STATES.filter(isQueueIndexed).map((state) => [state, new Map()]),
  );

  add(state: JobState, queue: string, key: string): void {
    this.byState.get(state)!.add(key);
    const queues = this.byQueue.get(state);
    if (queues === undefined) return;
    let keys = queues.get(queue);
    if (keys === undefined) {
      keys = new SortedKeySet();
      queues.set(queue, keys);
    }
    keys.add(key);
  }

  delete(state: JobState, queue: string, key: string): void {
    this.byState.get(state)!.delete(key);
    const queues = this.byQueue.get(state);
    const keys = queues?.get(queue);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) queues!.delete(queue);
  }

  /**
   * The keys of a state's jobs, or of those of one queue where the state is
   * indexed per queue (of all queues otherwise); undefined when there are none.
   */
  keys(state: JobState, queue?: string): SortedKeySet | undefined {
    const queues = this.byQueue.get(state);
    return queue === undefined || queues === undefined ? this.byState.get(state) : queues.get(queue);
  }

  /** The queues that have keys in `state` (indexed per queue), with their keys: for the audit. */
  queues(state: JobState): ReadonlyMap<string, SortedKeySet> {
    return this.byQueue.get(state) ?? new Map();
  }
}
