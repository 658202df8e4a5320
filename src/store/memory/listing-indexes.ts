import { JOB_STATES, type Job, type JobState } from '../../domain/job';
import { listingKey, listingTimeOf } from '../../domain/job-query';
import { SortedKeySet } from './sorted-key-set';

/** Digits of the time part of a listing key (domain listingKey pads times to 15). */
const KEY_TIME_DIGITS = 15;

/** The listing key of a job in its current state (domain job-query.ts). */
export function listingKeyOf(job: Job): string {
  return listingKey(listingTimeOf(job), job.id);
}

/** The job id a listing key names. */
export function jobIdOfKey(key: string): string {
  return key.slice(KEY_TIME_DIGITS + 1);
}

/** The listing time a listing key starts with. */
export function timeOfKey(key: string): number {
  return Number(key.slice(0, KEY_TIME_DIGITS));
}

/**
 * The job listings: per state, and per state and queue, the listing keys of
 * the jobs in that state, in key order. Entries are exact (a change removes
 * the job's old key and adds its new one), so a page reads only live keys
 * and deleting a job leaves nothing behind. A queue's set goes when it
 * empties, so the listings cost nothing for queues that hold no jobs.
 */
export class ListingIndexes {
  // Maps rather than records: a lookup by a variable state is then a hash lookup, not a keyed property access.
  private readonly byState = new Map<JobState, SortedKeySet>(JOB_STATES.map((state) => [state, new SortedKeySet()]));
  private readonly byQueue = new Map<JobState, Map<string, SortedKeySet>>(JOB_STATES.map((state) => [state, new Map()]));

  add(state: JobState, queue: string, key: string): void {
    this.byState.get(state)!.add(key);
    const queues = this.byQueue.get(state)!;
    let keys = queues.get(queue);
    if (keys === undefined) {
      keys = new SortedKeySet();
      queues.set(queue, keys);
    }
    keys.add(key);
  }

  delete(state: JobState, queue: string, key: string): void {
    this.byState.get(state)!.delete(key);
    const queues = this.byQueue.get(state)!;
    const keys = queues.get(queue);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) queues.delete(queue);
  }

  /** The keys of a state's jobs, or of those of one queue; undefined when there are none. */
  keys(state: JobState, queue?: string): SortedKeySet | undefined {
    return queue === undefined ? this.byState.get(state) : this.byQueue.get(state)!.get(queue);
  }

  /** The queues that have keys in `state`, with their keys: for the audit. */
  queues(state: JobState): ReadonlyMap<string, SortedKeySet> {
    return this.byQueue.get(state)!;
  }
}
