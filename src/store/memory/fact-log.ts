import { cursorAt, cursorPosition, firstLogPosition, type EventFact, type JobFact, type RecordedFact } from '../../domain/event-facts';
import type { EventRetention } from '../../domain/retention';
import type { JobTransition } from '../../domain/transition';
import type { FactPage } from '../job-store';

/** What the log counts for a fact beyond its strings: the entry, the cursor, the numbers and the object headers, roughly. */
export const FACT_OVERHEAD_BYTES = 256;

/**
 * A fact as the log holds it. A job's is the very transition the change
 * returned (so that the two cannot differ), its kind added when first read.
 */
export type HeldFact = Exclude<EventFact, JobFact> | JobFact | JobTransition;

interface Follower {
  /** Position of the next fact it is owed (see FactLog). */
  next: number;
  listener: (facts: RecordedFact[]) => void;
}

/**
 * The memory store's event log: a ring of the newest facts, at most
 * `retention.maxCount` of them (none when it is 0) and at most `maxBytes`
 * of them by their rough size, the oldest leaving first; `prune` drops
 * those past the retention's age.
 *
 * Cursors are fact positions (domain event-facts.ts), numbered from
 * firstLogPosition of the first fact's time. Followers remember the
 * position of the next fact they are owed and are handed everything from
 * it when `deliver` runs, which the store does once an operation has
 * completed: a follower sees every fact once and in order, and a follower
 * left behind by retention resumes at the oldest fact held.
 *
 * Entries are kept in parallel arrays (numbers unboxed), so that recording
 * a fact allocates nothing but the fact: the log sits on the hot path of
 * every change.
 */
export class FactLog {
  private facts: (HeldFact | undefined)[] = [];
  private times: number[] = [];
  private sizes: number[] = [];
  private head = 0;
  /** The position of the oldest fact held (of the next one recorded, when none is); undefined before the first. */
  private firstPosition: number | undefined;
  private heldBytes = 0;
  private readonly followers = new Set<Follower>();

  constructor(
    private readonly retention: Readonly<EventRetention>,
    private readonly maxBytes: number,
  ) {}

  /** Facts held. */
  get size(): number {
    return this.facts.length - this.head;
  }

  /** The sum of the held facts' sizes. */
  get bytes(): number {
    return this.heldBytes;
  }

  record(fact: HeldFact): void {
    if (this.retention.maxCount === 0) return;
    this.firstPosition ??= firstLogPosition(fact.at);
    const bytes = factBytes(fact);
    this.facts.push(fact);
    this.times.push(fact.at);
    this.sizes.push(bytes);
    this.heldBytes += bytes;
    // The newest fact stays whatever it weighs: a follower must be able to see it.
    while (this.size > this.retention.maxCount || (this.heldBytes > this.maxBytes && this.size > 1)) this.dropOldest();
  }

  /** Up to `limit` facts after `after` (from the oldest without it), and the oldest cursor held. */
  read(after: string | undefined, limit: number): FactPage {
    const start = after === undefined ? 0 : this.indexAfter(after);
    const facts: RecordedFact[] = [];
    for (let i = start; i < Math.min(this.size, start + limit); i++) facts.push(this.recorded(i));
    return this.size === 0 ? { facts } : { facts, oldest: this.cursor(0) };
  }

  /** Drops the facts older than the retention's age at `now` (oldest first, up to the first young enough); returns how many. */
  prune(now: number): number {
    const cutoff = now - this.retention.maxAgeMs;
    let pruned = 0;
    while (this.size > 0 && this.times[this.head]! < cutoff) {
      this.dropOldest();
      pruned += 1;
    }
    return pruned;
  }

  /** Follows the log from after `after`, or from the next fact recorded; returns the unfollow. */
  follow(after: string | undefined, listener: (facts: RecordedFact[]) => void): () => void {
    const next = after === undefined ? this.nextPosition() : cursorPosition(after) + 1;
    const follower: Follower = { next, listener };
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Hands each follower the facts it is owed, in one batch; returns whether anyone was handed any. */
  deliver(): boolean {
    let delivered = false;
    for (const follower of this.followers) {
      // Read for each follower: a listener may call the store, which records more.
      const end = this.nextPosition();
      if (follower.next >= end) continue;
      const first = end - this.size;
      const facts: RecordedFact[] = [];
      for (let i = Math.max(follower.next, first) - first; i < this.size; i++) facts.push(this.recorded(i));
      follower.next = end;
      if (facts.length === 0) continue;
      delivered = true;
      follower.listener(facts);
    }
    return delivered;
  }

  unfollowAll(): void {
    this.followers.clear();
  }

  /** Every held fact with its counted size, oldest first: for the audit. */
  *held(): IterableIterator<{ recorded: RecordedFact; bytes: number }> {
    for (let i = 0; i < this.size; i++) yield { recorded: this.recorded(i), bytes: this.sizes[this.head + i]! };
  }

  /** The `i`th fact held (from the oldest) as readers get it. */
  private recorded(i: number): RecordedFact {
    const index = this.head + i;
    let fact = this.facts[index]!;
    if (!('kind' in fact)) {
      fact = { kind: 'job', ...fact };
      this.facts[index] = fact;
    }
    return { cursor: this.cursor(i), fact };
  }

  private cursor(i: number): string {
    return cursorAt(this.firstPosition! + i);
  }

  /** The position the next fact recorded gets (0 before the first: every fact comes after). */
  private nextPosition(): number {
    return this.firstPosition === undefined ? 0 : this.firstPosition + this.size;
  }

  /** The index (from the oldest held) of the first fact after `cursor`. */
  private indexAfter(cursor: string): number {
    if (this.firstPosition === undefined) return 0;
    return Math.min(this.size, Math.max(0, cursorPosition(cursor) + 1 - this.firstPosition));
  }

  private dropOldest(): void {
    this.heldBytes -= this.sizes[this.head]!;
    // Cleared at once so that a dropped fact's memory is freed before the next compaction.
    this.facts[this.head] = undefined;
    this.head += 1;
    this.firstPosition! += 1;
    if (this.head > 1_024 && this.head * 2 > this.facts.length) {
      this.facts = this.facts.slice(this.head);
      this.times = this.times.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Roughly what a fact takes: the overhead and its strings. A job's fact,
 * recorded with every change, is measured field by field (its error summary
 * as JSON); the rarer facts of workers and queues are measured as JSON.
 */
export function factBytes(fact: HeldFact): number {
  if ('kind' in fact && fact.kind !== 'job') return FACT_OVERHEAD_BYTES + JSON.stringify(fact).length;
  let bytes = FACT_OVERHEAD_BYTES + fact.jobId.length + fact.jobType.length + fact.queue.length;
  bytes += (fact.workerId?.length ?? 0) + (fact.traceparent?.length ?? 0) + (fact.reason?.length ?? 0) + (fact.actor?.length ?? 0);
  if (fact.error !== undefined) bytes += JSON.stringify(fact.error).length;
  return bytes;
}
