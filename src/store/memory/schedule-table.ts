import { quote } from '../../domain/errors';
import type { ScheduleFact } from '../../domain/event-facts';
import type { DueSchedules, EnqueueOutcome, FireTicksParams } from '../job-store';
import type { Page } from '../../domain/paging';
import type { Schedule } from '../../domain/schedule';
import { SortedKeySet } from './sorted-key-set';

/** Digits of a due key's time: every epoch millisecond up to the year 33658. */
const DUE_TIME_DIGITS = 15;

/** A schedule's key in the due index: its next_run_at, so that keys sort by time, then its name. */
function dueKey(schedule: Schedule): string | undefined {
  return schedule.nextRunAt === undefined ? undefined : `${String(schedule.nextRunAt).padStart(DUE_TIME_DIGITS, '0')}/${schedule.name}`;
}

/** The schedules of the memory store, by name and by next tick. */
export class ScheduleTable {
  private readonly schedules = new Map<string, Schedule>();
  /** The keys of `schedules`, in order, for paged listings. */
  private readonly names = new SortedKeySet();
  /** The due key (dueKey) of every schedule that has a next tick. */
  private readonly due = new SortedKeySet();

  get(name: string): Schedule | undefined {
    return this.schedules.get(name);
  }

  get size(): number {
    return this.schedules.size;
  }

  /** Stores a schedule in place of the one of its name, if any. */
  put(schedule: Schedule): void {
    this.delete(schedule.name);
    this.schedules.set(schedule.name, schedule);
    this.names.add(schedule.name);
    const key = dueKey(schedule);
    if (key !== undefined) this.due.add(key);
  }

  /** Removes a schedule; whether there was one. */
  delete(name: string): boolean {
    const schedule = this.schedules.get(name);
    if (schedule === undefined) return false;
    this.schedules.delete(name);
    this.names.delete(name);
    const key = dueKey(schedule);
    if (key !== undefined) this.due.delete(key);
    return true;
  }

  page(after: string | undefined, limit: number): Page<Schedule> {
    return this.names.page(after, limit, limit, (name) => this.schedules.get(name));
  }

  /** Schedules due at `now`, earliest first, at most `limit`, and when the next pass is due (ScheduleStore.findDueSchedules). */
  dueAt(now: number, limit: number): DueSchedules {
    const schedules: Schedule[] = [];
    for (const key of this.due.after()) {
      const schedule = this.schedules.get(key.slice(key.indexOf('/') + 1));
      // A key out of step with its schedule is skipped (problems() reports it).
      if (schedule?.nextRunAt === undefined) continue;
      if (schedule.nextRunAt > now) return { schedules, nextDueAt: schedule.nextRunAt };
      if (schedules.length >= limit) return { schedules, nextDueAt: now };
      schedules.push(schedule);
    }
    return { schedules, nextDueAt: undefined };
  }

  /** Whether the schedule of `name` has the earliest next tick of all. */
  isFirstDue(name: string): boolean {
    const [first] = this.due.after();
    return first !== undefined && first.slice(first.indexOf('/') + 1) === name;
  }

  /** Every disagreement between the schedules and their indexes, as sentences. */
  problems(): string[] {
    const problems: string[] = [];
    const dueKeys = new Set<string>();
    for (const [name, schedule] of this.schedules) {
      if (schedule.name !== name) problems.push(`schedule ${quote(name)} is stored under the name ${quote(schedule.name)}`);
      if (!this.names.has(name)) problems.push(`schedule ${quote(name)} is not in the schedule listing`);
      if (schedule.isPaused && schedule.nextRunAt !== undefined) problems.push(`schedule ${quote(name)} is paused but has a next run`);
      const key = dueKey(schedule);
      if (key === undefined) continue;
      dueKeys.add(key);
      if (!this.due.has(key)) problems.push(`schedule ${quote(name)} is missing from the due index`);
    }
    if (this.names.size !== this.schedules.size)
      problems.push(`the schedule listing has ${this.names.size} names for ${this.schedules.size} schedules`);
    for (const key of this.due.after())
      if (!dueKeys.has(key)) problems.push(`the due index has ${quote(key)}, which no schedule is due under`);
    return problems;
  }
}

/**
 * The facts a fired plan records, in tick order: its missed ticks skipped,
 * then its tick triggered (a job stored) or skipped (the unfinished job
 * that stood in). `schedule` is as the plan left it.
 */
export function tickFacts(schedule: Schedule, params: FireTicksParams, enqueued: EnqueueOutcome | undefined): ScheduleFact[] {
  const facts: ScheduleFact[] = [];
  const base = {
    kind: 'schedule',
    at: params.now,
    name: schedule.name,
    expression: schedule.expression,
    timezone: schedule.timezone,
  } as const;
  const { missed, tick } = params;
  if (missed !== undefined) {
    facts.push({
      ...base,
      tick: missed.first,
      reason: 'missed',
      missedCount: missed.count,
      lastMissed: missed.last,
      isCountAtLeast: missed.isCountAtLeast,
    });
  }
  if (params.invalidTick !== undefined) facts.push({ ...base, tick: params.invalidTick, reason: 'invalid_template' });
  if (tick !== undefined && enqueued !== undefined) {
    const { job } = enqueued;
    const fact: ScheduleFact = { ...base, tick: tick.at, jobId: job.id, jobType: job.type, queue: job.queue };
    if (enqueued.deduplicated) fact.reason = 'overlap_skip';
    else fact.runCount = schedule.runCount;
    facts.push(fact);
  }
  return facts;
}
