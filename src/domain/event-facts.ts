import type { HandlerCode, JobError, JobState } from './job';
import type { JsonObject } from './json';
import type { RateLimitStrategy } from './rate-limit-events';
import type { WorkerState } from './worker';
import type { WorkflowFact } from './workflow-facts';

/**
 * What a store records in its event log, in the same atomic step as the
 * change it describes: one fact per change. The facts are the stored form
 * of the lifecycle events; event-catalog.ts derives the events (one fact
 * may stand for two, such as job.failed and job.retrying) when they are read.
 */
export type EventFact = JobFact | ProgressFact | WorkerFact | QueueFact | ScheduleFact | RateLimitFact | WorkflowFact;

export type { WorkflowFact };

/** Why a job entered available, when that is not plain enqueueing (event data `reason`). */
export type JobEntryReason = 'activated' | 'due' | 'retry' | 'manual_retry' | 'undelivered' | 'workflow';

/** The part of an error an event carries: enough to alert on, bounded in size. */
export interface ErrorSummary {
  type: string;
  /** At most {@link SUMMARY_MESSAGE_MAX_CHARS} characters. */
  message: string;
  code?: HandlerCode;
  /** Only the details of a timeout the server recorded (kind, limit, elapsed): small and known. */
  details?: JsonObject;
}

export const SUMMARY_MESSAGE_MAX_CHARS = 500;

/** A job changing state. Also what telemetry records for every transition (transition.ts). */
export interface JobFact {
  kind: 'job';
  /** Epoch milliseconds of the change. */
  at: number;
  jobId: string;
  jobType: string;
  queue: string;
  from: JobState | 'none';
  to: JobState;
  attempt: number;
  /** The worker holding the job (entering active) or that held it (leaving active). */
  workerId?: string;
  /** Entering a waiting state from none: its priority. */
  priority?: number;
  /** Entering scheduled: when it becomes available. */
  scheduledAt?: number;
  /** Entering retryable, or available at once after a failure: when it runs again. */
  nextRetryAt?: number;
  /** A failed attempt: the attempts its retry policy allows. */
  maxAttempts?: number;
  /** Leaving or entering active: when the attempt started. */
  startedAt?: number;
  /** Entering active: when the job became available. */
  enqueuedAt?: number;
  /** Discarded while waiting (expiry): when the job was created. */
  createdAt?: number;
  /** The error the change recorded (a failed attempt, an expiry). */
  error?: ErrorSummary;
  /** Entering discarded: into the dead letter set. */
  deadLetter?: boolean;
  /** Entering available other than by enqueueing, or why a job was cancelled. */
  reason?: string;
  /** Who asked for the change (an operator, a producer), when someone did. */
  actor?: string;
  /** W3C trace context of the job (meta.traceparent), so that its events and spans join its trace. */
  traceparent?: string;
}

/** A worker reported progress on a held job (ojs-progress). */
export interface ProgressFact {
  kind: 'progress';
  at: number;
  jobId: string;
  jobType: string;
  queue: string;
  workerId: string;
  attempt: number;
  /** 0..1, when the report carried one. */
  progress?: number;
  traceparent?: string;
}

/** A worker registering, changing state, or leaving (deregistered, or declared dead). */
export interface WorkerFact {
  kind: 'worker';
  at: number;
  workerId: string;
  from: WorkerState | 'none';
  to: WorkerState | 'removed';
  /** For removals. */
  reason?: 'deregistered' | 'dead';
  /** For registrations. */
  queues?: string[];
  concurrency?: number;
  /** Jobs the worker held at the change. */
  activeJobs?: number;
  /** For removals: how long it was registered. */
  registeredAt?: number;
  /** For removals of a dead worker: when it last beat. */
  lastBeatAt?: number;
}

/** A queue paused or resumed. */
export interface QueueFact {
  kind: 'queue';
  at: number;
  queue: string;
  paused: boolean;
  actor?: string;
}

/**
 * A queue's limits held its available jobs back (`exceeded`), or let them
 * start again after that (`released`): sampled, at most one exceeded per
 * queue per window (rate-limit-events.ts).
 */
export interface RateLimitFact {
  kind: 'rate_limit';
  at: number;
  queue: string;
  change: 'exceeded' | 'released';
  /** The limit that held the jobs back (released: the one of its episode). */
  strategy: RateLimitStrategy;
  /** Exceeded: the limit, and the starts its window counted or the active jobs. */
  limit?: number;
  current?: number;
  /** Released: the first job then started; absent when the queue's limits were cleared. */
  jobId?: string;
}

/**
 * Why a schedule's tick enqueued no job (cron.skipped `reason`, ojs-cron
 * 9.2): `overlap_skip`, the schedule's previous job had not finished;
 * `missed`, ticks no replica fired in time that the missed-tick policy
 * passes over; `invalid_template`, the schedule's template no longer makes
 * a valid job (the server's limits changed since it was registered). Both
 * extend the spec's list, which has no reason for either. Paused schedules plan no ticks, and a time a spring-forward
 * skips is no tick (domain CronCalendar), so `disabled` and `dst_skip`
 * never occur.
 */
export type ScheduleSkipReason = 'overlap_skip' | 'missed' | 'invalid_template';

/** A schedule's tick enqueued a job (cron.triggered) or none (cron.skipped). */
export interface ScheduleFact {
  kind: 'schedule';
  at: number;
  name: string;
  expression: string;
  timezone: string;
  /** The tick (its scheduled time); for missed ticks, the first of them. */
  tick: number;
  /** Triggered: the job enqueued; skipped for an overlap: the unfinished job that stood in. */
  jobId?: string;
  jobType?: string;
  queue?: string;
  /** Triggered: the schedule's runs, this one included. */
  runCount?: number;
  /** Skipped: why (absent: triggered). */
  reason?: ScheduleSkipReason;
  /** Missed ticks: how many, the last one counted, and whether more passed (domain MissedTicks). */
  missedCount?: number;
  lastMissed?: number;
  isCountAtLeast?: boolean;
}

/** A fact as the log holds it: `cursor` orders the log and resumes a reader after it. */
export interface RecordedFact {
  cursor: string;
  fact: EventFact;
}

/** The error summary an event carries for a recorded error. */
export function summarizeError(error: Pick<JobError, 'type' | 'message' | 'code' | 'details'>): ErrorSummary {
  const summary: ErrorSummary = { type: error.type, message: error.message.slice(0, SUMMARY_MESSAGE_MAX_CHARS) };
  if (error.code !== undefined) summary.code = error.code;
  if (error.details !== undefined && typeof error.details['timeout_kind'] === 'string') summary.details = error.details;
  return summary;
}

/**
 * Log cursors are fact positions, written as decimal integers: a log
 * numbers its facts one after the other, so cursors order facts exactly,
 * and a reader resumes after any of them, even one stored together with
 * others (a shared store keeps the facts of one change in one entry).
 * Numbering starts at {@link firstLogPosition} of the first fact's time,
 * so a log recreated after its data was lost starts beyond every cursor
 * handed out before: an old cursor then reads as fallen out of retention,
 * never as a position still to come. "0" comes before every fact.
 * Negative when `a` comes before `b`.
 */
export function compareCursors(a: string, b: string): number {
  return cursorPosition(a) - cursorPosition(b);
}

const CURSOR_PATTERN = /^\d{1,16}$/;

/** Whether `cursor` has the form of a log cursor. */
export function isCursor(cursor: string): boolean {
  return CURSOR_PATTERN.test(cursor) && Number(cursor) <= Number.MAX_SAFE_INTEGER;
}

/** The cursor just before `cursor`: reading after it starts with the fact at `cursor`. */
export function cursorBefore(cursor: string): string {
  return String(Math.max(0, cursorPosition(cursor) - 1));
}

/** The cursor of the fact at `position`. */
export function cursorAt(position: number): string {
  return String(position);
}

/** The position a cursor names (0 for what is no cursor: before every fact). */
export function cursorPosition(cursor: string): number {
  return isCursor(cursor) ? Number(cursor) : 0;
}

/** Positions a log reserves per millisecond of its start time: more facts per millisecond than any store records. */
export const LOG_POSITIONS_PER_MS = 1_000;

/** Start times are capped here (the year 2191), so that positions stay exact integers for ages beyond it. */
export const LOG_START_MAX_MS = 7_000_000_000_000;

/**
 * The position of a log's first fact, recorded at `at`: its time in
 * microseconds, roughly. A log recreated later starts beyond the last
 * position of the one before as long as that one recorded fewer than
 * {@link LOG_POSITIONS_PER_MS} facts per millisecond of its life.
 */
export function firstLogPosition(at: number): number {
  return Math.min(Math.max(0, at), LOG_START_MAX_MS) * LOG_POSITIONS_PER_MS + 1;
}

/**
 * A worker's beat, or a lease extension: what the live-only heartbeat
 * events (job.heartbeat, worker.heartbeat) come from. Never logged.
 */
export interface HeartbeatNotice {
  at: number;
  workerId: string;
  /** The worker's state, for a beat. */
  state?: WorkerState;
  /** The held jobs whose lease the beat or extension renewed. */
  jobs: RenewedLease[];
}

/** A held job whose lease a beat or an extension renewed. */
export interface RenewedLease {
  jobId: string;
  jobType: string;
  queue: string;
  attempt: number;
  /** When the renewed lease lapses (job.heartbeat visible_until). */
  visibleUntil: number;
}
