import type { JobTransition } from '../../domain/transition';
import type { MinuteCounts } from '../job-store';

export const MINUTE_MS = 60_000;
/** Minutes of throughput kept per queue: the last hour. */
export const THROUGHPUT_MINUTES = 60;

type Counted = keyof Omit<MinuteCounts, 'minute'>;

/**
 * What a transition counts for in its queue's throughput: completed (entering
 * completed), failed (an attempt that failed: leaving active with an error,
 * retried or not, but not cancelled) and discarded (entering discarded,
 * whatever the cause).
 */
export function throughputOf(t: JobTransition): Counted[] {
  const counted: Counted[] = [];
  if (t.to === 'completed') counted.push('completed');
  if (t.from === 'active' && t.error !== undefined && (t.to === 'retryable' || t.to === 'available' || t.to === 'discarded')) {
    counted.push('failed');
  }
  if (t.to === 'discarded') counted.push('discarded');
  return counted;
}

/**
 * Completed, failed and discarded counts per queue and minute over the last
 * hour: at most THROUGHPUT_MINUTES buckets per queue, reused as minutes pass
 * (a bucket is indexed by its minute modulo the hour), and dropped with the
 * queue. A count for a minute older than its bucket's is too old to keep.
 */
export class QueueThroughput {
  private readonly byQueue = new Map<string, (MinuteCounts | undefined)[]>();

  count(t: JobTransition): void {
    const counted = throughputOf(t);
    if (counted.length === 0) return;
    let buckets = this.byQueue.get(t.queue);
    if (buckets === undefined) {
      buckets = [];
      this.byQueue.set(t.queue, buckets);
    }
    const minute = minuteOf(t.at);
    const slot = (minute / MINUTE_MS) % THROUGHPUT_MINUTES;
    let bucket = buckets[slot];
    if (bucket !== undefined && bucket.minute > minute) return;
    if (bucket?.minute !== minute) {
      bucket = { minute, completed: 0, failed: 0, discarded: 0 };
      buckets[slot] = bucket;
    }
    for (const field of counted) bucket[field] += 1;
  }

  /** The minutes up to the one holding `now`, oldest first, zero where nothing was counted. */
  minutes(queue: string, now: number): MinuteCounts[] {
    const buckets = this.byQueue.get(queue);
    const last = minuteOf(now);
    return Array.from({ length: THROUGHPUT_MINUTES }, (_, i) => {
      const minute = last - (THROUGHPUT_MINUTES - 1 - i) * MINUTE_MS;
      const bucket = buckets?.[(minute / MINUTE_MS) % THROUGHPUT_MINUTES];
      return bucket?.minute === minute ? { ...bucket } : { minute, completed: 0, failed: 0, discarded: 0 };
    });
  }

  drop(queue: string): void {
    this.byQueue.delete(queue);
  }

  /** The queues with counts, and how many buckets each keeps: for the audit. */
  *queues(): IterableIterator<[string, number]> {
    for (const [queue, buckets] of this.byQueue) yield [queue, buckets.length];
  }
}

function minuteOf(at: number): number {
  return at - (at % MINUTE_MS);
}
