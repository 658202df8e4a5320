import { invalidRequest } from './errors';
import { errorTypeProblem, jobIdProblem, jobTypeProblem, queueNameProblem } from './identifiers';
import { PRIORITY_MAX, PRIORITY_MIN } from './job-submission';
import { isTerminal } from './job-state-machine';
import { JOB_STATES, type JobState } from './job';
import { scheduleNameProblem } from './schedule';
import { CRON_NAME_META } from './schedule-tick';
import { timestampProblem } from './timestamps';

/**
 * Which jobs a listing or a bulk operation selects (ojs-admin-api 7,
 * ojs-bulk-operations 6, ojs-dead-letter 9.1). Every field narrows: an
 * absent one selects everything.
 */
export interface JobFilter {
  /** At least one state (the caller expands "any" to every state). */
  states: readonly JobState[];
  queue?: string;
  type?: string;
  /** Only the jobs a cron schedule made (meta.cron_name). */
  schedule?: string;
  /** Only the jobs of a workflow (Job.workflow). */
  workflow?: string;
  /** Only jobs whose last error has this type (dead-letter search). */
  errorType?: string;
  /** Only discarded jobs put in the dead letter set (true), or only those not (false). */
  deadLetter?: boolean;
  /** Epoch milliseconds, inclusive bounds. */
  createdAfter?: number;
  createdBefore?: number;
  finishedAfter?: number;
  finishedBefore?: number;
}

export type ListOrder = 'newest' | 'oldest';

/**
 * One page of a job listing, in listing order (see {@link listingKey}):
 * `after` is the cursor of the previous page, the key of the last job it
 * examined.
 */
export interface JobQuery {
  filter: JobFilter;
  order: ListOrder;
  after?: string;
  limit: number;
  /** Most bytes of jobs in one page (a listing must fit a gRPC message too); a first job always fits. */
  maxBytes: number;
  /**
   * Most jobs one call examines for the filters no index answers (type,
   * schedule, workflow, error type, dead letter, off-index times, the queue of active jobs),
   * and most queues it visits for available jobs.
   */
  scanBudget: number;
}

/*
 * Listing order. Oldest first lists the available jobs first, in run order:
 * queue by queue in name order, each queue as it delivers (higher priority
 * first, then first in, first out; the next job to run comes first). Then
 * the jobs of the other states, merged by their listing time
 * (listingTimeOf) and id. Newest first is the exact reverse. A job keeps its
 * key while it stays in its state (its run position, or its listing time),
 * so paging neither repeats nor skips a job that stays in the filtered set.
 */

/**
 * The time a job is listed by in a state other than available: when it
 * finished (finished states), when its attempt started (active), when it
 * was created (scheduled, pending, retryable). Available jobs are listed in
 * run order instead ({@link availableListingKey}).
 */
export function listingTimeOf(job: { state: JobState; createdAt: number; startedAt?: number; completedAt?: number }): number {
  if (isTerminal(job.state)) return job.completedAt ?? job.createdAt;
  if (job.state === 'active') return job.startedAt ?? job.createdAt;
  return job.createdAt;
}

/**
 * The sort key of a job in a state listed by time: its listing time,
 * zero-padded so that keys sort as the times do, then its id.
 */
export function listingKey(time: number, jobId: string): string {
  return `${String(time).padStart(15, '0')}:${jobId}`;
}

/** Run sequences (the order jobs became available, per store) stay below this: priorities are multiples of it in a rank. */
export const RUN_SEQUENCE_SPAN = 2 ** 41;

/**
 * Where an available job stands in its queue's run order: higher priority
 * first, then the order jobs became available (`sequence`, from 1, counted
 * by the store as jobs enter available). An exact integer over the whole
 * priority range.
 */
export function runRank(priority: number, sequence: number): number {
  return (PRIORITY_MAX - priority) * RUN_SEQUENCE_SPAN + sequence;
}

/** A rank past every job's: the position after a whole queue (rank 0 is before a whole queue). */
export const RUN_RANK_END = (PRIORITY_MAX - PRIORITY_MIN + 1) * RUN_SEQUENCE_SPAN;

const RANK_DIGITS = 16;

/** The key of an available job in listings: its queue, then its run rank, zero-padded. */
export function availableListingKey(queue: string, rank: number): string {
  return `${queue}#${String(rank).padStart(RANK_DIGITS, '0')}`;
}

const AVAILABLE_KEY_PATTERN = /^([a-z0-9][a-z0-9.-]*)#(\d{16})$/;

/** The queue and run rank of an available listing key, or undefined when `key` is none. */
export function parseAvailableListingKey(key: string): { queue: string; rank: number } | undefined {
  const match = AVAILABLE_KEY_PATTERN.exec(key);
  if (match === null || queueNameProblem(match[1]!) !== undefined) return undefined;
  const rank = Number(match[2]);
  return rank > RUN_RANK_END ? undefined : { queue: match[1]!, rank };
}

const LISTING_KEY_PATTERN = /^\d{15}:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Whether `key` has the form of a listing key (a cursor a listing gave): a job's listing time and id, or an available job's run position. */
export function isListingKey(key: string): boolean {
  return LISTING_KEY_PATTERN.test(key) || parseAvailableListingKey(key) !== undefined;
}

/** Most jobs one call examines for what no index answers: bounds the work of one page or one bulk call. */
export const JOB_SCAN_BUDGET = 10_000;

/** A filter as a request spells it, before it is checked. */
export interface JobFilterInput {
  states: readonly JobState[];
  queue: string;
  type: string;
  schedule: string;
  /** '' for none. */
  workflow?: string;
  errorType: string;
  deadLetter?: boolean;
  createdAfter?: number;
  createdBefore?: number;
  finishedAfter?: number;
  finishedBefore?: number;
}

/** Checks a filter; no states means every state. */
export function checkJobFilter(input: JobFilterInput, path = 'filter'): JobFilter {
  const filter: JobFilter = { states: input.states.length === 0 ? JOB_STATES : [...new Set(input.states)] };
  const check = (field: string, value: string, problem: (value: string) => string | undefined): string | undefined => {
    if (value === '') return undefined;
    const found = problem(value);
    if (found !== undefined) throw invalidRequest(`${path}.${field}`, found);
    return value;
  };
  const queue = check('queue', input.queue, queueNameProblem);
  if (queue !== undefined) filter.queue = queue;
  const type = check('type', input.type, jobTypeProblem);
  if (type !== undefined) filter.type = type;
  const schedule = check('schedule', input.schedule, scheduleNameProblem);
  if (schedule !== undefined) filter.schedule = schedule;
  const workflow = check('workflow_id', input.workflow ?? '', jobIdProblem);
  if (workflow !== undefined) filter.workflow = workflow;
  const errorType = check('error_type', input.errorType, errorTypeProblem);
  if (errorType !== undefined) filter.errorType = errorType;
  if (input.deadLetter !== undefined) filter.deadLetter = input.deadLetter;
  for (const [field, value] of [
    ['created_after', input.createdAfter],
    ['created_before', input.createdBefore],
    ['finished_after', input.finishedAfter],
    ['finished_before', input.finishedBefore],
  ] as const) {
    if (value === undefined) continue;
    const problem = timestampProblem(value);
    if (problem !== undefined) throw invalidRequest(`${path}.${field}`, problem);
  }
  if (input.createdAfter !== undefined) filter.createdAfter = input.createdAfter;
  if (input.createdBefore !== undefined) filter.createdBefore = input.createdBefore;
  if (input.finishedAfter !== undefined) filter.finishedAfter = input.finishedAfter;
  if (input.finishedBefore !== undefined) filter.finishedBefore = input.finishedBefore;
  return filter;
}

/** Whether `job` passes every field of `filter` (what a scan applies; stores use their indexes where they can). */
export function matchesFilter(
  job: {
    state: JobState;
    queue: string;
    type: string;
    meta: Readonly<Record<string, unknown>>;
    createdAt: number;
    completedAt?: number;
    deadLetter: boolean;
    error?: { type: string };
    workflow?: { id: string };
  },
  filter: JobFilter,
): boolean {
  if (!filter.states.includes(job.state)) return false;
  if (filter.queue !== undefined && job.queue !== filter.queue) return false;
  if (filter.type !== undefined && job.type !== filter.type) return false;
  if (filter.schedule !== undefined && job.meta[CRON_NAME_META] !== filter.schedule) return false;
  if (filter.workflow !== undefined && job.workflow?.id !== filter.workflow) return false;
  if (filter.errorType !== undefined && job.error?.type !== filter.errorType) return false;
  if (filter.deadLetter !== undefined && (job.state !== 'discarded' || job.deadLetter !== filter.deadLetter)) return false;
  if (filter.createdAfter !== undefined && job.createdAt < filter.createdAfter) return false;
  if (filter.createdBefore !== undefined && job.createdAt > filter.createdBefore) return false;
  const finished = isTerminal(job.state) ? job.completedAt : undefined;
  if (filter.finishedAfter !== undefined && (finished === undefined || finished < filter.finishedAfter)) return false;
  if (filter.finishedBefore !== undefined && (finished === undefined || finished > filter.finishedBefore)) return false;
  return true;
}
