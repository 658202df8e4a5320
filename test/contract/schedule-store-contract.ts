import { sha256Hex } from '../../lib/sha256';
import { refusal } from '../support/refusal';
import type { ScheduleSpec } from '../../src/domain/schedule';
import { tickJobId, tickSubmission } from '../../src/domain/schedule-tick';
import type { JobStore } from '../../src/store/job-store';
import { StoreHarness, T0 } from './store-harness';

export interface ScheduleStoreFactory {
  /** A fresh, empty store. */
  create(): Promise<JobStore>;
}

const SECOND = 1_000;

function spec(overrides: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    name: 'nightly',
    expression: '* * * * * *',
    timezone: 'UTC',
    template: { type: 'report.generate', args: [1], queue: 'reports' },
    overlap: 'skip',
    missedTicks: 'run_once',
    description: 'a report',
    isPaused: false,
    ...overrides,
  };
}

/**
 * The schedule storage every store must have (JobStore's ScheduleStore part): registration,
 * listing, pausing, and ticks claimed atomically. Time is passed in.
 */
export function describeScheduleStoreContract(storeName: string, factory: ScheduleStoreFactory): void {
  describe(`${storeName} schedule store contract`, () => {
    let store: JobStore;
    let h: StoreHarness;

    beforeEach(async () => {
      store = await factory.create();
      h = new StoreHarness(store);
    });
    afterEach(async () => {
      h.close();
      const problems = await store.audit();
      await store.close();
      if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
    });

    /** The job of the schedule's tick at `at`, as the application builds it. */
    const tickJob = (overlap: ScheduleSpec['overlap'], at: number) => {
      const job = h.job(
        { ...tickSubmission({ name: 'nightly', template: spec().template, overlap }, at), id: tickJobId('nightly', at, sha256Hex) },
        { now: at },
      );
      return { at, job };
    };

    /** Fires the tick due at `at` of a schedule that ticks every second, planned at `at`. */
    const fire = async (at: number, overlap: ScheduleSpec['overlap'] = 'skip', revision = 1) =>
      store.fireTicks({ name: 'nightly', revision, expectedNextRunAt: at, tick: tickJob(overlap, at), nextRunAt: at + SECOND, now: at });

    it('registers a schedule with its first tick, and updates it in place, keeping its runs', async () => {
      const created = await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      expect(created).toEqual({
        created: true,
        schedule: { ...spec(), createdAt: T0, updatedAt: T0, revision: 1, anchoredAt: T0, runCount: 0, nextRunAt: T0 + SECOND },
      });
      expect((await fire(T0 + SECOND)).fired).toBe(true);
      const updated = await store.registerSchedule({
        spec: spec({ description: 'changed' }),
        nextRunAt: T0 + 5 * SECOND,
        now: T0 + 2 * SECOND,
      });
      expect(updated).toEqual({
        created: false,
        schedule: {
          ...spec({ description: 'changed' }),
          createdAt: T0,
          updatedAt: T0 + 2 * SECOND,
          revision: 2,
          anchoredAt: T0 + 2 * SECOND,
          runCount: 1,
          lastRunAt: T0 + SECOND,
          nextRunAt: T0 + 5 * SECOND,
        },
      });
      expect(await store.getSchedule('nightly')).toEqual(updated.schedule);
    });

    it('stores the anchor it is given and returns it, everywhere, until a registration gives another; pausing, resuming and ticks keep it', async () => {
      const every = spec({ expression: '@every 90m' });
      const anchoredAt = T0 - 7 * SECOND;
      const created = await store.registerSchedule({ spec: every, anchoredAt, nextRunAt: anchoredAt + 5_400 * SECOND, now: T0 });
      expect(created.schedule.anchoredAt).toBe(anchoredAt);
      await store.setSchedulePaused({ name: 'nightly', paused: true, now: T0 + SECOND });
      const resumed = await store.setSchedulePaused({
        name: 'nightly',
        paused: false,
        nextRunAt: anchoredAt + 5_400 * SECOND,
        now: T0 + 2 * SECOND,
      });
      expect(resumed.schedule.anchoredAt).toBe(anchoredAt);
      const due = await store.findDueSchedules(anchoredAt + 5_400 * SECOND, 10);
      expect(due.schedules.map((schedule) => schedule.anchoredAt)).toEqual([anchoredAt]);
      const fired = await store.fireTicks({
        name: 'nightly',
        revision: 1,
        expectedNextRunAt: anchoredAt + 5_400 * SECOND,
        nextRunAt: anchoredAt + 10_800 * SECOND,
        now: anchoredAt + 5_400 * SECOND,
      });
      expect(fired).toMatchObject({ fired: true, schedule: { anchoredAt } });
      expect((await store.listSchedules({ limit: 10 })).items.map((schedule) => schedule.anchoredAt)).toEqual([anchoredAt]);
      const moved = await store.registerSchedule({ spec: every, anchoredAt: T0 + 9 * SECOND, now: T0 + 9 * SECOND });
      expect(moved.schedule.anchoredAt).toBe(T0 + 9 * SECOND);
      expect(await store.getSchedule('nightly')).toEqual(moved.schedule);
    });

    it('refuses a new schedule beyond the most it may hold (queue_full), but updates a registered one', async () => {
      await store.registerSchedule({ spec: spec({ name: 'a' }), now: T0, maxSchedules: 2 });
      await store.registerSchedule({ spec: spec({ name: 'b' }), now: T0, maxSchedules: 2 });
      expect(await refusal(store.registerSchedule({ spec: spec({ name: 'c' }), now: T0, maxSchedules: 2 }))).toMatchObject({
        code: 'queue_full',
      });
      expect((await store.registerSchedule({ spec: spec({ name: 'b', description: 'again' }), now: T0, maxSchedules: 2 })).created).toBe(
        false,
      );
      await store.removeSchedule('a');
      await store.registerSchedule({ spec: spec({ name: 'c' }), now: T0, maxSchedules: 2 });
      expect((await store.listSchedules({ limit: 10 })).items.map((s) => s.name)).toEqual(['b', 'c']);
    });

    it('lists schedules by name, page by page, and removes them', async () => {
      for (const name of ['c', 'a', 'b']) await store.registerSchedule({ spec: spec({ name }), nextRunAt: T0 + SECOND, now: T0 });
      const first = await store.listSchedules({ limit: 2 });
      expect(first.items.map((s) => s.name)).toEqual(['a', 'b']);
      const second = await store.listSchedules({ after: first.nextAfter!, limit: 2 });
      expect(second.items.map((listed) => listed.name)).toEqual(['c']);
      expect(second.nextAfter).toBeUndefined();
      await store.removeSchedule('b');
      expect((await store.listSchedules({ limit: 10 })).items.map((s) => s.name)).toEqual(['a', 'c']);
      expect(await store.getSchedule('b')).toBeUndefined();
      const error = await refusal(store.removeSchedule('b'));
      expect(error.code).toBe('not_found');
      expect(error.metadata).toMatchObject({ schedule_name: 'b' });
    });

    it('finds due schedules earliest first, up to a limit, and never a paused one', async () => {
      await store.registerSchedule({ spec: spec({ name: 'late' }), nextRunAt: T0 + 3 * SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'early' }), nextRunAt: T0 + SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'later' }), nextRunAt: T0 + 9 * SECOND, now: T0 });
      const paused = await store.registerSchedule({ spec: spec({ name: 'paused', isPaused: true }), nextRunAt: T0 + SECOND, now: T0 });
      expect(paused.schedule.nextRunAt).toBeUndefined();
      expect((await store.findDueSchedules(T0, 10)).schedules.map((s) => s.name)).toEqual([]);
      expect((await store.findDueSchedules(T0 + 3 * SECOND, 10)).schedules.map((s) => s.name)).toEqual(['early', 'late']);
      expect((await store.findDueSchedules(T0 + 3 * SECOND, 1)).schedules.map((s) => s.name)).toEqual(['early']);
    });

    it('tells when the next pass is due: the earliest tick after now, or now when the limit left due ones out', async () => {
      expect((await store.findDueSchedules(T0, 10)).nextDueAt).toBeUndefined();
      await store.registerSchedule({ spec: spec({ name: 'late' }), nextRunAt: T0 + 3 * SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'early' }), nextRunAt: T0 + SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'later' }), nextRunAt: T0 + 9 * SECOND, now: T0 });
      expect((await store.findDueSchedules(T0, 10)).nextDueAt).toBe(T0 + SECOND);
      expect((await store.findDueSchedules(T0 + 3 * SECOND, 10)).nextDueAt).toBe(T0 + 9 * SECOND);
      expect((await store.findDueSchedules(T0 + 3 * SECOND, 1)).nextDueAt).toBe(T0 + 3 * SECOND);
      expect((await store.findDueSchedules(T0 + 9 * SECOND, 10)).nextDueAt).toBeUndefined();
    });

    it('announces a tick that comes before every other, and no other', async () => {
      await store.registerSchedule({ spec: spec({ name: 'late' }), nextRunAt: T0 + 3 * SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'early' }), nextRunAt: T0 + 2 * SECOND, now: T0 });
      await store.registerSchedule({ spec: spec({ name: 'later' }), nextRunAt: T0 + 9 * SECOND, now: T0 });
      await store.setSchedulePaused({ name: 'later', paused: true, now: T0 });
      await store.setSchedulePaused({ name: 'later', paused: false, nextRunAt: T0 + SECOND, now: T0 });
      // Signals keep their order: once the resumed tick's has come, any for the later one would have come before it.
      await h.waitForSignal('scheduleDueAt', (s) => s.at === T0 + SECOND);
      expect(h.signalsOf('scheduleDueAt').map((s) => s.at)).toEqual([T0 + 3 * SECOND, T0 + 2 * SECOND, T0 + SECOND]);
    });

    it('pauses a schedule without a next run and resumes it at the tick given', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      const paused = await store.setSchedulePaused({ name: 'nightly', paused: true, now: T0 + 100 });
      expect(paused.changed).toBe(true);
      expect(paused.schedule).toMatchObject({ isPaused: true, updatedAt: T0 + 100 });
      expect(paused.schedule.nextRunAt).toBeUndefined();
      expect((await store.findDueSchedules(T0 + 10 * SECOND, 10)).schedules).toEqual([]);
      expect((await store.setSchedulePaused({ name: 'nightly', paused: true, now: T0 + 200 })).changed).toBe(false);
      const resumed = await store.setSchedulePaused({ name: 'nightly', paused: false, nextRunAt: T0 + 11 * SECOND, now: T0 + 10 * SECOND });
      expect(resumed).toMatchObject({ changed: true, schedule: { isPaused: false, nextRunAt: T0 + 11 * SECOND } });
      expect((await store.findDueSchedules(T0 + 11 * SECOND, 10)).schedules.map((s) => s.name)).toEqual(['nightly']);
      expect((await refusal(store.setSchedulePaused({ name: 'missing', paused: true, now: T0 }))).code).toBe('not_found');
    });

    it('fires a tick once: the job is enqueued, the schedule moves on, a second plan of the same tick changes nothing', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      const fired = await fire(T0 + SECOND);
      if (!fired.fired) throw new Error('expected the tick to fire');
      expect(fired.schedule).toMatchObject({ nextRunAt: T0 + 2 * SECOND, lastRunAt: T0 + SECOND, runCount: 1 });
      const job = fired.enqueued!.job;
      expect(fired.enqueued!.deduplicated).toBe(false);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'available', queue: 'reports', meta: { cron_name: 'nightly' } });
      expect(await fire(T0 + SECOND)).toEqual({ fired: false });
      expect((await store.findDueSchedules(T0 + SECOND, 10)).schedules).toEqual([]);
      expect(await store.getSchedule('nightly')).toEqual(fired.schedule);
    });

    it('refuses a plan made from an earlier revision, a removed schedule or a paused one', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      expect(await fire(T0 + SECOND, 'skip', 1)).toEqual({ fired: false });
      await store.setSchedulePaused({ name: 'nightly', paused: true, now: T0 });
      expect(await fire(T0 + SECOND, 'skip', 2)).toEqual({ fired: false });
      await store.removeSchedule('nightly');
      expect(await fire(T0 + SECOND, 'skip', 2)).toEqual({ fired: false });
      expect((await store.listQueues({ limit: 10 })).items).toEqual([]);
    });

    it('skips a tick while the previous job has not finished (overlap skip): nothing stored, no run counted', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      const first = await fire(T0 + SECOND);
      const second = await fire(T0 + 2 * SECOND);
      if (!first.fired || !second.fired) throw new Error('expected both ticks to fire');
      expect(second.enqueued).toEqual({ job: first.enqueued!.job, deduplicated: true });
      expect(second.schedule).toMatchObject({ nextRunAt: T0 + 3 * SECOND, lastRunAt: T0 + SECOND, runCount: 1 });
    });

    it('cancels the previous job under cancel_previous', async () => {
      await store.registerSchedule({ spec: spec({ overlap: 'cancel_previous' }), nextRunAt: T0 + SECOND, now: T0 });
      const first = await fire(T0 + SECOND, 'cancel_previous');
      const second = await fire(T0 + 2 * SECOND, 'cancel_previous');
      if (!first.fired || !second.fired) throw new Error('expected both ticks to fire');
      expect(second.enqueued?.replaced).toMatchObject({ jobId: first.enqueued!.job.id, to: 'cancelled' });
      expect(await h.state(first.enqueued!.job.id)).toBe('cancelled');
      expect(second.schedule).toMatchObject({ runCount: 2, lastRunAt: T0 + 2 * SECOND });
    });

    it('moves a schedule on without a job when the plan fires none (missed ticks skipped)', async () => {
      await store.registerSchedule({ spec: spec({ missedTicks: 'skip' }), nextRunAt: T0 + SECOND, now: T0 });
      const fired = await store.fireTicks({
        name: 'nightly',
        revision: 1,
        expectedNextRunAt: T0 + SECOND,
        nextRunAt: T0 + 61 * SECOND,
        now: T0 + 60 * SECOND,
      });
      if (!fired.fired) throw new Error('expected the plan to apply');
      expect(fired.enqueued).toBeUndefined();
      expect(fired.schedule).toMatchObject({ nextRunAt: T0 + 61 * SECOND, runCount: 0 });
      expect(fired.schedule.lastRunAt).toBeUndefined();
    });

    it('records cron.triggered and cron.skipped facts: missed ticks, then the tick, triggered or skipped for an overlap', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      const first = await fire(T0 + SECOND);
      const missed = { first: T0 + 2 * SECOND, last: T0 + 4 * SECOND, count: 3, isCountAtLeast: false };
      const tick = tickJob('skip', T0 + 5 * SECOND);
      await store.fireTicks({
        name: 'nightly',
        revision: 1,
        expectedNextRunAt: T0 + 2 * SECOND,
        tick,
        missed,
        nextRunAt: T0 + 6 * SECOND,
        now: T0 + 5_100,
      });
      if (!first.fired) throw new Error('expected the tick to fire');
      const facts = (await store.readFacts({ limit: 100 })).facts.map(({ fact }) => fact).filter((fact) => fact.kind === 'schedule');
      const base = { kind: 'schedule', name: 'nightly', expression: '* * * * * *', timezone: 'UTC' };
      const job = first.enqueued!.job;
      expect(facts).toEqual([
        { ...base, at: T0 + SECOND, tick: T0 + SECOND, jobId: job.id, jobType: 'report.generate', queue: 'reports', runCount: 1 },
        {
          ...base,
          at: T0 + 5_100,
          tick: T0 + 2 * SECOND,
          reason: 'missed',
          missedCount: 3,
          lastMissed: T0 + 4 * SECOND,
          isCountAtLeast: false,
        },
        {
          ...base,
          at: T0 + 5_100,
          tick: T0 + 5 * SECOND,
          jobId: job.id,
          jobType: 'report.generate',
          queue: 'reports',
          reason: 'overlap_skip',
        },
      ]);
    });

    it('records a tick whose template makes no job as skipped (invalid_template), counting no run', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      const fired = await store.fireTicks({
        name: 'nightly',
        revision: 1,
        expectedNextRunAt: T0 + SECOND,
        invalidTick: T0 + SECOND,
        nextRunAt: T0 + 2 * SECOND,
        now: T0 + SECOND,
      });
      if (!fired.fired) throw new Error('expected the plan to apply');
      expect(fired.schedule).toMatchObject({ nextRunAt: T0 + 2 * SECOND, runCount: 0 });
      const facts = (await store.readFacts({ limit: 100 })).facts.map(({ fact }) => fact).filter((fact) => fact.kind === 'schedule');
      expect(facts).toEqual([
        {
          kind: 'schedule',
          name: 'nightly',
          expression: '* * * * * *',
          timezone: 'UTC',
          at: T0 + SECOND,
          tick: T0 + SECOND,
          reason: 'invalid_template',
        },
      ]);
    });

    it('stops a schedule whose expression has no further tick', async () => {
      await store.registerSchedule({ spec: spec(), nextRunAt: T0 + SECOND, now: T0 });
      await store.fireTicks({
        name: 'nightly',
        revision: 1,
        expectedNextRunAt: T0 + SECOND,
        tick: tickJob('skip', T0 + SECOND),
        now: T0 + SECOND,
      });
      expect((await store.getSchedule('nightly'))?.nextRunAt).toBeUndefined();
      expect((await store.findDueSchedules(T0 + 1_000 * SECOND, 10)).schedules).toEqual([]);
    });
  });
}
