import { sha256Hex } from '../../lib/sha256';
import { assertField, scheduleNotFound, type FieldViolation } from '../domain/errors';
import type { Job } from '../domain/job';
import { buildJob, DEFAULT_QUEUE, type JobSubmission, type SubmissionProblems } from '../domain/job-submission';
import { mayUseQueue, type Principal } from '../domain/principal';
import type { Page, PageRequest } from '../domain/paging';
import {
  resolveScheduleSpec,
  scheduleAnchor,
  scheduleNameProblem,
  type CronCalendar,
  type Schedule,
  type ScheduleInput,
} from '../domain/schedule';
import { planTicks, tickJobId, tickSubmission } from '../domain/schedule-tick';
import { transitionOf } from '../domain/transition';
import type { FireTicksParams } from '../store/job-store';
import type { AppContext } from './app-context';
import { assertMayUseQueue } from './caller-scope';
import { watchDueTimes } from './due-announcements';
import { jobCreation } from './job-creation';

/** Most due schedules one pass fires; the rest wait for the next pass. */
export const SCHEDULE_BATCH = 100;

/**
 * How late a tick may fire under the missed-tick policy `skip`: a tick
 * this late was missed (downtime), not merely reached by a pass a little
 * after it. Several passes fit in it, so a replica that is slow for a
 * moment misses nothing.
 */
export const MISSED_TICK_GRACE_MS = 10_000;

/**
 * Cron schedules (ojs-cron): registration, listing and pausing, and the
 * pass that fires due ticks. Every replica runs the pass; the store fires a
 * tick only for the first plan made from the schedule as it still is
 * (fireTicks), so each tick makes at most one job fleet-wide. A
 * queue-scoped caller sees and steers only the schedules whose jobs go to
 * its queues.
 */
export class Schedules {
  constructor(
    private readonly ctx: AppContext,
    private readonly calendar: CronCalendar,
  ) {}

  /**
   * Registers or updates a schedule (upsert, ojs-cron 8.1); its first tick
   * is the first occurrence after now (of an interval expression, from its
   * anchor: domain scheduleAnchor).
   */
  async register(caller: Principal, input: ScheduleInput): Promise<{ schedule: Schedule; created: boolean }> {
    const now = this.ctx.clock.now();
    const spec = resolveScheduleSpec(input, this.calendar, (template) => this.templateProblems(template, now));
    assertMayUseQueue(caller, 'template.queue', this.queueOf(spec.template));
    const before = await this.ctx.store.getSchedule(spec.name);
    if (before !== undefined) assertMayUseQueue(caller, 'name', this.queueOf(before.template));
    const anchoredAt = scheduleAnchor(before, spec.expression, now);
    const nextRunAt = this.calendar.nextAfter(spec.expression, spec.timezone, now, anchoredAt);
    return this.ctx.store.registerSchedule(nextRunAt === undefined ? { spec, anchoredAt, now } : { spec, anchoredAt, nextRunAt, now });
  }

  async get(caller: Principal, name: string): Promise<Schedule> {
    assertField('name', scheduleNameProblem(name));
    const schedule = await this.ctx.store.getSchedule(name);
    if (schedule === undefined || !mayUseQueue(caller, this.queueOf(schedule.template))) throw scheduleNotFound(name);
    return schedule;
  }

  /** Removes a schedule; the jobs it made stay (ojs-cron 8.4). */
  async remove(caller: Principal, name: string): Promise<void> {
    await this.get(caller, name);
    await this.ctx.store.removeSchedule(name);
  }

  /**
   * One page of the schedules in name order, only paused or only running
   * ones when `paused` says; for a queue-scoped caller, only its own. Both
   * filter the store's page, so a page may hold fewer.
   */
  async list(caller: Principal, page: PageRequest, paused?: boolean): Promise<Page<Schedule>> {
    const found = await this.ctx.store.listSchedules(page);
    const isListed = (schedule: Schedule): boolean =>
      (paused === undefined || schedule.isPaused === paused) && mayUseQueue(caller, this.queueOf(schedule.template));
    return { ...found, items: found.items.filter(isListed) };
  }

  /**
   * Pauses (no next tick, ojs-cron 8.5) or resumes (from the first
   * occurrence after now; an interval expression keeps its anchor) a schedule.
   */
  async setPaused(caller: Principal, name: string, paused: boolean): Promise<Schedule> {
    const schedule = await this.get(caller, name);
    const now = this.ctx.clock.now();
    const nextRunAt = paused ? undefined : this.calendar.nextAfter(schedule.expression, schedule.timezone, now, schedule.anchoredAt);
    const changed = await this.ctx.store.setSchedulePaused(
      nextRunAt === undefined ? { name, paused, now } : { name, paused, nextRunAt, now },
    );
    return changed.schedule;
  }

  /** Calls `listener` with each time a schedule's tick comes before every other's (watchDueTimes); returns the unsubscribe. */
  watchTicks(listener: (at: number) => void): () => void {
    return watchDueTimes(this.ctx, 'scheduleDueAt', listener);
  }

  /**
   * Fires the ticks of the schedules due now: plans each (domain
   * planTicks) and hands the plan to the store, which applies it unless
   * another replica fired it first. Returns how many plans applied, and
   * when the next pass is due (ScheduleStore.findDueSchedules, or the next
   * tick of a schedule this pass moved on, if sooner).
   */
  async fireDue(): Promise<{ fired: number; nextDueAt: number | undefined }> {
    const { store, clock, telemetry, logger } = this.ctx;
    const now = clock.now();
    let fired = 0;
    const due = await store.findDueSchedules(now, SCHEDULE_BATCH);
    let nextDueAt = due.nextDueAt ?? Number.POSITIVE_INFINITY;
    for (const schedule of due.schedules) {
      const plan = planTicks(schedule, now, this.calendar, MISSED_TICK_GRACE_MS);
      if (plan === undefined || schedule.nextRunAt === undefined) continue;
      const params: FireTicksParams = { name: schedule.name, revision: schedule.revision, expectedNextRunAt: schedule.nextRunAt, now };
      if (plan.nextRunAt !== undefined) params.nextRunAt = plan.nextRunAt;
      if (plan.missed !== undefined) params.missed = plan.missed;
      if (plan.tick !== undefined) {
        const job = this.tickJob(schedule, plan.tick, now);
        if (job === undefined) {
          logger.warn({ schedule: schedule.name }, 'a schedule template no longer makes a valid job: the tick is skipped');
          params.invalidTick = plan.tick;
        } else {
          params.tick = { at: plan.tick, job };
        }
      }
      const outcome = await store.fireTicks(params);
      if (!outcome.fired) continue;
      fired += 1;
      nextDueAt = Math.min(nextDueAt, outcome.schedule.nextRunAt ?? Number.POSITIVE_INFINITY);
      const enqueued = outcome.enqueued;
      if (enqueued !== undefined && !enqueued.deduplicated) {
        const created = transitionOf(enqueued.job, 'none', enqueued.job.createdAt);
        telemetry.jobTransitions(enqueued.replaced === undefined ? [created] : [enqueued.replaced, created]);
      }
    }
    return { fired, nextDueAt: Number.isFinite(nextDueAt) ? nextDueAt : undefined };
  }

  /** The job of a tick, named the same on every replica (domain tickJobId); undefined if the template no longer makes a valid one. */
  private tickJob(schedule: Schedule, tick: number, now: number): Job | undefined {
    const problems: SubmissionProblems = { violations: [], oversized: [], answerBytes: 0 };
    const job = buildJob(
      tickSubmission(schedule, tick),
      jobCreation(this.ctx, now, { newId: () => tickJobId(schedule.name, tick, sha256Hex) }),
      'template',
      problems,
    );
    return problems.violations.length + problems.oversized.length === 0 ? job : undefined;
  }

  /** What is wrong with a template, as a job built from it now would show. */
  private templateProblems(template: JobSubmission, now: number): FieldViolation[] {
    const problems: SubmissionProblems = { violations: [], oversized: [], answerBytes: 0 };
    buildJob(template, jobCreation(this.ctx, now), 'template', problems);
    const oversized = problems.oversized.map(({ field, bytes, maxBytes }) => ({
      field,
      description: `is ${bytes} bytes, more than ${maxBytes}`,
    }));
    return [...problems.violations, ...oversized];
  }

  private queueOf(template: JobSubmission): string {
    return template.queue || DEFAULT_QUEUE;
  }
}
