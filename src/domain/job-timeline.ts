import type { Job, JobState, TerminalState } from './job';

/** What happened to a job at one moment of its life, as its envelope tells it. */
export type TimelineEntryKind =
  'created' | 'scheduled' | 'enqueued' | 'started' | 'failed' | 'retry_due' | 'completed' | 'cancelled' | 'discarded';

/** One entry of a job's timeline. Times are epoch milliseconds. */
export interface TimelineEntry {
  kind: TimelineEntryKind;
  at: number;
  /** The attempt the entry is about (started, failed, retry_due and the end of a job that ran). */
  attempt?: number;
  /** scheduled: when the job becomes due. */
  dueAt?: number;
  /** failed: the error the attempt recorded. */
  errorType?: string;
  errorMessage?: string;
  /** discarded: whether the job went to the dead letter. */
  isDeadLetter?: boolean;
}

/** Order of entries that share a millisecond: the order in which they can happen. */
const KIND_ORDER: readonly TimelineEntryKind[] = [
  'created',
  'scheduled',
  'enqueued',
  'started',
  'failed',
  'retry_due',
  'completed',
  'cancelled',
  'discarded',
];

/** The entry that ends the timeline of a job in each terminal state. */
const END_KINDS: Readonly<Partial<Record<JobState, TerminalState>>> = {
  completed: 'completed',
  cancelled: 'cancelled',
  discarded: 'discarded',
};

/**
 * A job's past, derived from its envelope alone, oldest first: it needs no
 * read of the event log (which has no index by job and is pruned by age),
 * so it costs nothing more than reading the job and still tells the story
 * after the log has forgotten it.
 *
 * The envelope keeps only what the state machine keeps, so the timeline
 * tells: the creation (and the schedule it was given), the last time the job
 * became available, every failure the error history holds (the most recent
 * ERROR_HISTORY_LIMIT, each with its attempt and time), the start of the
 * current or last attempt (earlier attempts' starts are not kept; their
 * failures are), when a retryable job's next attempt is due, and how and
 * when it ended. A manual retry of a discarded job resets its attempts and
 * errors (ojs-core 6.3), and so its timeline starts again from then.
 */
export function jobTimeline(job: Job): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ kind: 'created', at: job.createdAt }];
  if (job.scheduledAt !== undefined && job.scheduledAt > job.createdAt) {
    entries.push({ kind: 'scheduled', at: job.createdAt, dueAt: job.scheduledAt });
  }
  if (job.enqueuedAt !== undefined) entries.push({ kind: 'enqueued', at: job.enqueuedAt });
  const started = lastStart(job);
  if (started !== undefined) entries.push({ kind: 'started', at: started, attempt: job.attempt });
  for (const error of job.errors) {
    entries.push({ kind: 'failed', at: error.occurredAt, attempt: error.attempt, errorType: error.type, errorMessage: error.message });
  }
  if (job.state === 'retryable' && job.nextRetryAt !== undefined) {
    entries.push({ kind: 'retry_due', at: job.nextRetryAt, attempt: job.attempt + 1 });
  }
  const endKind = END_KINDS[job.state];
  if (endKind !== undefined && job.completedAt !== undefined) {
    const end: TimelineEntry = { kind: endKind, at: job.completedAt };
    if (job.attempt > 0) end.attempt = job.attempt;
    if (job.state === 'discarded') end.isDeadLetter = job.deadLetter;
    entries.push(end);
  }
  // A stable sort: entries of one millisecond keep the order they can happen in.
  return entries.toSorted((a, b) => a.at - b.at || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
}

/**
 * When the job's current attempt started, if it did. `startedAt` outlives
 * its attempt: a claim that was never delivered gives the attempt back and
 * leaves its start behind (after that attempt's own failure), and a manual
 * retry resets the attempt to 0. Neither is a start of `job.attempt`.
 */
function lastStart(job: Job): number | undefined {
  const { startedAt, attempt } = job;
  if (startedAt === undefined || attempt < 1) return undefined;
  const isAfterOwnFailure = job.errors.some((error) => error.attempt === attempt && error.occurredAt < startedAt);
  return isAfterOwnFailure ? undefined : startedAt;
}
