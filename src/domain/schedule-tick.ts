import { isTerminal } from './job-state-machine';
import { JOB_STATES } from './job';
import type { JobSubmission } from './job-submission';
import type { CronCalendar, Schedule } from './schedule';

/** Meta keys of a job a schedule made (ojs-cron 6.3): the schedule's name and the tick, ISO 8601. */
export const CRON_NAME_META = 'cron_name';
export const CRON_TRIGGERED_AT_META = 'cron_triggered_at';

/**
 * Most occurrences one plan walks to count the ticks a gap passed over; a
 * longer gap is reported as "at least" that many (the next tick is found
 * directly, so a plan's cost stays bounded however long the gap). The ticks
 * of an interval expression are counted, not walked.
 */
export const MISSED_SCAN_MAX = 1_000;

/** Ticks a plan passed over without firing them (downtime, missed-tick policy). */
export interface MissedTicks {
  first: number;
  /** The last one counted: with isCountAtLeast, more passed after it, up to the tick that fired. */
  last: number;
  count: number;
  /** More ticks passed than were counted (MISSED_SCAN_MAX). */
  isCountAtLeast: boolean;
}

/** What one evaluation of a due schedule does; applied by the store only if the schedule is still as read. */
export interface TickPlan {
  /** The tick to fire (a job is enqueued for it), if any. */
  tick?: number;
  missed?: MissedTicks;
  /** The schedule's next tick after this plan (undefined: none ever). */
  nextRunAt?: number;
}

/**
 * Plans the ticks of a due schedule at `now` (ojs-cron 7.3): every
 * occurrence from its next_run_at up to now is due; the latest fires (under
 * `skip`, only if at most `graceMs` late), the others are missed; the next
 * tick is the first occurrence after now. Undefined when nothing is due.
 * Every replica reading the same schedule plans the same ticks, so the
 * store can accept the first plan and refuse the others.
 */
export function planTicks(schedule: Schedule, now: number, calendar: CronCalendar, graceMs: number): TickPlan | undefined {
  const first = schedule.nextRunAt;
  if (first === undefined || first > now || schedule.isPaused) return undefined;
  const next = (after: number): number | undefined =>
    calendar.nextAfter(schedule.expression, schedule.timezone, after, schedule.anchoredAt);
  const intervalMs = calendar.intervalMs(schedule.expression);
  const due = intervalMs === undefined ? walkedDue(first, now, next) : spacedDue(first, now, intervalMs);
  const { latest } = due;
  const fires = latest !== undefined && (schedule.missedTicks === 'run_once' || now - latest <= graceMs);
  const plan: TickPlan = {};
  if (fires) plan.tick = latest;
  const missed = fires ? due.earlier : passedOver(due);
  if (missed !== undefined) plan.missed = missed;
  const nextRunAt = next(now);
  if (nextRunAt !== undefined) plan.nextRunAt = nextRunAt;
  return plan;
}

/** The ticks due at a plan: the latest, and those before it, as counted. */
interface DueTicks {
  /** Undefined when a gap too long to walk hid it (latestDue). */
  latest: number | undefined;
  /** The due ticks before the latest (with isCountAtLeast, not reaching it); undefined when there are none. */
  earlier: MissedTicks | undefined;
}

/** The ticks a plan that fires none passes over: the earlier ones and the latest, when it was counted. */
function passedOver({ latest, earlier }: DueTicks): MissedTicks | undefined {
  if (latest === undefined || earlier?.isCountAtLeast === true) return earlier;
  return earlier === undefined
    ? { first: latest, last: latest, count: 1, isCountAtLeast: false }
    : { ...earlier, last: latest, count: earlier.count + 1 };
}

/** The due ticks of an interval expression, every `intervalMs` from `first`: counted exactly, however long the gap. */
function spacedDue(first: number, now: number, intervalMs: number): DueTicks {
  const count = Math.floor((now - first) / intervalMs) + 1;
  const latest = first + (count - 1) * intervalMs;
  const earlier = count === 1 ? undefined : { first, last: latest - intervalMs, count: count - 1, isCountAtLeast: false };
  return { latest, earlier };
}

/** The due ticks of a calendar expression, walked from `first`: at most MISSED_SCAN_MAX of them are counted. */
function walkedDue(first: number, now: number, next: (after: number) => number | undefined): DueTicks {
  const walked = walk(first, now, next);
  const latest = latestDue(now, next, walked);
  const counted = latest === walked.at(-1) ? walked.slice(0, -1) : walked;
  const earlier =
    counted.length === 0
      ? undefined
      : { first: counted[0]!, last: counted.at(-1)!, count: counted.length, isCountAtLeast: counted.length === walked.length };
  return { latest, earlier };
}

/** The occurrences from `first` (due) up to `now`, at most MISSED_SCAN_MAX of them. */
function walk(first: number, now: number, next: (after: number) => number | undefined): number[] {
  const due = [first];
  for (let at = next(first); at !== undefined && at <= now && due.length < MISSED_SCAN_MAX; at = next(at)) due.push(at);
  return due;
}

/** How far back the latest due tick of a gap longer than a walk is looked for: nearest first. */
const LOOKBACKS_MS = [60_000, 3_600_000, 86_400_000, 32 * 86_400_000, 367 * 86_400_000];

/**
 * The latest occurrence at or before `now`: the walk's last, or, when the
 * walk stopped short, found by walking from a look-back before now (a
 * schedule that ticks so often that a walk stops short ticks within a
 * minute of now).
 */
function latestDue(now: number, next: (after: number) => number | undefined, due: readonly number[]): number | undefined {
  const last = due.at(-1)!;
  const following = next(last);
  if (due.length < MISSED_SCAN_MAX || following === undefined || following > now) return last;
  for (const lookbackMs of LOOKBACKS_MS) {
    const start = next(Math.max(last, now - lookbackMs));
    if (start === undefined || start > now) continue;
    const recent = walk(start, now, next);
    if (recent.length < MISSED_SCAN_MAX) return recent.at(-1);
  }
  return undefined;
}

/** The states in which a schedule's previous job has not finished: its overlap policy holds while it is in one. */
export const UNFINISHED_STATES = JOB_STATES.filter((state) => !isTerminal(state));

/**
 * The job a tick enqueues: the template, marked with the schedule and the
 * tick (ojs-cron 6.3). The overlap policy is the job's unique policy over
 * the schedule's name (the store's atomic unique enqueue does the overlap
 * check): skip is "ignore" (the unfinished job stands in, nothing is
 * stored), cancel_previous is "replace"; allow keeps the template's,
 * reject made ignore.
 */
export function tickSubmission(schedule: Pick<Schedule, 'name' | 'template' | 'overlap'>, tick: number): JobSubmission {
  const { template } = schedule;
  const submission: JobSubmission = {
    ...template,
    meta: { ...template.meta, [CRON_NAME_META]: schedule.name, [CRON_TRIGGERED_AT_META]: new Date(tick).toISOString() },
  };
  if (schedule.overlap !== 'allow') {
    submission.unique = {
      keys: ['meta'],
      metaKeys: [CRON_NAME_META],
      states: UNFINISHED_STATES,
      onConflict: schedule.overlap === 'skip' ? 'ignore' : 'replace',
    };
  } else if (template.unique !== undefined && (template.unique.onConflict ?? 'reject') !== 'replace') {
    // A tick is never refused (it would stay due forever): a duplicate under the template's own policy skips it.
    submission.unique = { ...template.unique, onConflict: 'ignore' };
  }
  return submission;
}

/**
 * The id of a tick's job, the same on every replica: a UUIDv7 whose time is
 * the tick and whose random bits are taken from `digest` (hex) of the
 * schedule's name and tick, so a replayed tick names the same job.
 */
export function tickJobId(name: string, tick: number, digest: (text: string) => string): string {
  const time = tick.toString(16).padStart(12, '0').slice(-12);
  const hash = digest(`${name}\n${tick}`);
  const variant = ((parseInt(hash[15]!, 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hash.slice(0, 3)}-${variant}${hash.slice(3, 6)}-${hash.slice(6, 18)}`;
}
