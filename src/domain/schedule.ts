import { OjsError, storeFull, type FieldViolation } from './errors';
import { hasControlCharacters } from './identifiers';
import type { JobSubmission } from './job-submission';

/**
 * Cron schedules (ojs-cron): a named registration that enqueues a job from
 * its template at every occurrence of a cron expression in an IANA zone.
 */

/** What a tick does while the schedule's previous job has not finished (ojs-cron 6). */
export const OVERLAP_POLICIES = ['skip', 'allow', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/**
 * What happens to ticks no replica fired in time (all down, or paused
 * processes): `run_once` fires one catch-up tick, the latest that passed
 * (ojs-cron 7.3, at most one); `skip` fires none that is later than the
 * grace and records them as skipped.
 */
export const MISSED_TICK_POLICIES = ['run_once', 'skip'] as const;
export type MissedTickPolicy = (typeof MISSED_TICK_POLICIES)[number];

/**
 * The calendar of cron expressions: the port to the parser (lib/cron-calendar.ts),
 * since the domain uses no library. Times are epoch milliseconds.
 */
export interface CronCalendar {
  /** Why the expression (field "cron") or the zone (field "timezone") is refused; undefined when both are good. */
  problem(expression: string, timezone: string): FieldViolation | undefined;
  /**
   * The first occurrence strictly after `after`, under ojs-cron 5.2: none in
   * an hour a spring-forward skips, once (the first) in an hour a fall-back
   * repeats. Undefined when there is none. The occurrences of an interval
   * expression (`@every <duration>`, ojs-cron 4.1) are `anchor` + k·interval
   * (k ≥ 1) in any zone; other expressions ignore `anchor`.
   */
  nextAfter(expression: string, timezone: string, after: number, anchor: number): number | undefined;
  /**
   * The interval of an interval expression, in milliseconds; undefined for a
   * calendar expression. Its occurrences are evenly spaced, so a long gap is
   * counted, not walked (planTicks).
   */
  intervalMs(expression: string): number | undefined;
}

/** A schedule as an operator registers it. */
export interface ScheduleSpec {
  name: string;
  expression: string;
  /** IANA zone name; "UTC" by default. */
  timezone: string;
  /** The job each tick enqueues, as Enqueue takes it. */
  template: JobSubmission;
  overlap: OverlapPolicy;
  missedTicks: MissedTickPolicy;
  description: string;
  isPaused: boolean;
}

/** A stored schedule: its spec and what the server keeps of its runs (ojs-cron 2.2, system-managed). */
export interface Schedule extends ScheduleSpec {
  createdAt: number;
  updatedAt: number;
  /** Bumped by every registration, so a tick planned from an older version is refused. */
  revision: number;
  /**
   * When the current expression was registered (scheduleAnchor): the anchor
   * of an interval expression, whose ticks are anchoredAt + k·interval
   * (ojs-cron 4.1). Kept by pausing and resuming.
   */
  anchoredAt: number;
  /** The next tick to fire; undefined while paused (ojs-cron 8.5) or when the expression has no future occurrence. */
  nextRunAt?: number;
  /** The last tick that enqueued a job. */
  lastRunAt?: number;
  runCount: number;
}

/** ojs-cron 2.2: lowercase alphanumerics, hyphens and dots, starting with an alphanumeric. */
const NAME_PATTERN = /^[a-z0-9][a-z0-9.-]*$/;
export const SCHEDULE_NAME_MAX_CHARS = 255;
export const CRON_EXPRESSION_MAX_CHARS = 256;
export const TIMEZONE_MAX_CHARS = 64;
export const SCHEDULE_DESCRIPTION_MAX_CHARS = 1_000;
export const DEFAULT_TIMEZONE = 'UTC';
/** Most schedules a deployment holds: registrations are cheap to send, and each is evaluated at every tick. */
export const MAX_SCHEDULES = 10_000;

/** A new schedule beyond MAX_SCHEDULES (an update of a registered one always passes). */
export function tooManySchedules(max: number): OjsError {
  return storeFull('schedules', `it holds ${max} schedules, the most it may; delete one first`);
}

export function scheduleNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is required';
  if (name.length > SCHEDULE_NAME_MAX_CHARS) return `must be at most ${SCHEDULE_NAME_MAX_CHARS} characters`;
  if (!NAME_PATTERN.test(name)) return 'must be lowercase letters, digits, hyphens and dots, starting with a letter or digit';
  return undefined;
}

/**
 * The anchor of a registration (Schedule.anchoredAt): the one before when
 * the expression is unchanged, else now. So re-registering a schedule as it
 * is (a deployment applying its schedules again) keeps an interval
 * schedule's ticks where they were instead of postponing them, and a new
 * expression ticks from its registration (ojs-cron 4.1).
 */
export function scheduleAnchor(before: Pick<Schedule, 'expression' | 'anchoredAt'> | undefined, expression: string, now: number): number {
  return before?.expression === expression ? before.anchoredAt : now;
}

/** A schedule as a registration request carries it: strings unchecked, '' for absent. */
export interface ScheduleInput {
  name: string;
  expression: string;
  timezone: string;
  template: JobSubmission;
  overlap: string;
  missedTicks: string;
  description: string;
  isPaused: boolean;
}

const isOneOf = <T extends string>(values: readonly T[], value: string): value is T => (values as readonly string[]).includes(value);

/**
 * Checks a registration and resolves its defaults (zone UTC, overlap skip,
 * missed ticks run_once); throws invalid_request naming every bad field
 * (ojs-cron 3.5).
 * The template is checked by building a job from it (the caller's, which
 * knows the server's defaults and limits), through `templateProblems`.
 */
export function resolveScheduleSpec(
  input: ScheduleInput,
  calendar: CronCalendar,
  templateProblems: (template: JobSubmission) => FieldViolation[],
): ScheduleSpec {
  const violations: FieldViolation[] = [];
  const bad = (field: string, description: string | undefined): void => {
    if (description !== undefined) violations.push({ field, description });
  };
  bad('name', scheduleNameProblem(input.name));
  const timezone = input.timezone === '' ? DEFAULT_TIMEZONE : input.timezone;
  if (input.expression.length > CRON_EXPRESSION_MAX_CHARS) bad('cron', `must be at most ${CRON_EXPRESSION_MAX_CHARS} characters`);
  else if (timezone.length > TIMEZONE_MAX_CHARS) bad('timezone', `must be at most ${TIMEZONE_MAX_CHARS} characters`);
  else {
    const problem = calendar.problem(input.expression, timezone);
    if (problem !== undefined) violations.push(problem);
  }
  const overlap = input.overlap === '' ? 'skip' : input.overlap;
  if (!isOneOf(OVERLAP_POLICIES, overlap)) bad('overlap_policy', `must be one of ${OVERLAP_POLICIES.join(', ')}`);
  const missedTicks = input.missedTicks === '' ? 'run_once' : input.missedTicks;
  if (!isOneOf(MISSED_TICK_POLICIES, missedTicks)) bad('missed_tick_policy', `must be one of ${MISSED_TICK_POLICIES.join(', ')}`);
  if (input.description.length > SCHEDULE_DESCRIPTION_MAX_CHARS)
    bad('description', `must be at most ${SCHEDULE_DESCRIPTION_MAX_CHARS} characters`);
  else if (hasControlCharacters(input.description)) bad('description', 'must not contain control characters');
  // The overlap policy decides the jobs' uniqueness (schedule-tick.ts): a template's own would fight it.
  if (input.template.unique !== undefined && overlap !== 'allow') bad('template.unique', 'is only allowed with overlap_policy allow');
  if (input.template.id !== undefined && input.template.id !== '') bad('template.id', 'must be empty: each tick names its job');
  if (input.template.scheduledAt !== undefined) bad('template.scheduled_at', 'must be empty: the tick is when the job runs');
  violations.push(...templateProblems(input.template));
  if (violations.length > 0 || !isOneOf(OVERLAP_POLICIES, overlap) || !isOneOf(MISSED_TICK_POLICIES, missedTicks)) {
    throw invalidSchedule(violations);
  }
  return {
    name: input.name,
    expression: input.expression,
    timezone,
    template: input.template,
    overlap,
    missedTicks,
    description: input.description,
    isPaused: input.isPaused,
  };
}

/** A registration failed validation: invalid_request (ojs-cron 3.5), the message naming every bad field. */
function invalidSchedule(violations: FieldViolation[]): OjsError {
  const message = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new OjsError('invalid_request', message, { fieldViolations: violations, metadata: { field: violations[0]?.field ?? '' } });
}
