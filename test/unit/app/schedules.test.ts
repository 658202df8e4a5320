import { sha256Hex } from '../../../lib/sha256';
import { refusal } from '../../support/refusal';
import { createApplication } from '../../../src/app/application';
import type { ScheduleFact } from '../../../src/domain/event-facts';
import { JOB_STATES } from '../../../src/domain/job';
import { JOB_SCAN_BUDGET, type JobQuery } from '../../../src/domain/job-query';
import type { Principal } from '../../../src/domain/principal';
import { ANONYMOUS } from '../../../src/domain/principal';
import type { ScheduleInput } from '../../../src/domain/schedule';
import { tickJobId } from '../../../src/domain/schedule-tick';
import { AppHarness } from './app-harness';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const SECOND = 1_000;

function input(overrides: Partial<ScheduleInput> = {}): ScheduleInput {
  return {
    name: 'sync',
    expression: '*/5 * * * * *',
    timezone: '',
    template: { type: 'data.sync', args: [1], queue: 'sync' },
    overlap: '',
    missedTicks: '',
    description: '',
    isPaused: false,
    ...overrides,
  };
}

describe('Schedules', () => {
  let h: AppHarness;
  beforeEach(() => {
    h = new AppHarness();
  });
  afterEach(async () => {
    const problems = await h.store.audit();
    await h.stop();
    if (problems.length > 0) throw new Error(`the store audit found:\n${problems.join('\n')}`);
  });

  const scheduleFacts = async (): Promise<ScheduleFact[]> =>
    (await h.store.readFacts({ limit: 1_000 })).facts.flatMap(({ fact }) => (fact.kind === 'schedule' ? [fact] : []));
  /** The jobs a schedule made, oldest first (ListJobs finds them by queue; their meta names the schedule). */
  const jobsOf = async (name: string) => {
    const query: JobQuery = {
      filter: { states: JOB_STATES, queue: 'sync' },
      order: 'oldest',
      limit: 100,
      maxBytes: 1e7,
      scanBudget: JOB_SCAN_BUDGET,
    };
    return (await h.store.listJobs(query)).items.filter((job) => job.meta['cron_name'] === name);
  };

  it('says when the next pass is due: the earliest tick left, the one it just moved a schedule to included', async () => {
    await h.app.schedules.register(ANONYMOUS, input());
    await h.app.schedules.register(ANONYMOUS, input({ name: 'slow', expression: '0 0 * * * *' }));
    expect(await h.app.schedules.fireDue()).toEqual({ fired: 0, nextDueAt: T0 + 5 * SECOND });
    h.clock.advance(5 * SECOND);
    expect(await h.app.schedules.fireDue()).toEqual({ fired: 1, nextDueAt: T0 + 10 * SECOND });
  });

  it('registers a schedule with its defaults and its first tick after now, and refuses a bad one naming every field', async () => {
    const { schedule, created } = await h.app.schedules.register(ANONYMOUS, input());
    expect(created).toBe(true);
    expect(schedule).toMatchObject({ timezone: 'UTC', overlap: 'skip', missedTicks: 'run_once', nextRunAt: T0 + 5 * SECOND, revision: 1 });
    const error = await refusal(h.app.schedules.register(ANONYMOUS, input({ expression: 'nope', template: { type: '', args: [] } })));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('cron:');
    expect(error.message).toContain('template.type');
  });

  it('fires each tick once with the job its template makes, named by the tick, even when two replicas run the pass', async () => {
    await h.app.schedules.register(ANONYMOUS, input({ overlap: 'allow' }));
    const other = createApplication(h.app.context);
    h.clock.advance(5 * SECOND);
    expect((await h.app.schedules.fireDue()).fired).toBe(1);
    expect((await other.schedules.fireDue()).fired).toBe(0);
    h.clock.advance(5 * SECOND);
    expect((await other.schedules.fireDue()).fired).toBe(1);
    expect((await h.app.schedules.fireDue()).fired).toBe(0);
    const jobs = await jobsOf('sync');
    expect(jobs.map((job) => job.id)).toEqual([
      tickJobId('sync', T0 + 5 * SECOND, sha256Hex),
      tickJobId('sync', T0 + 10 * SECOND, sha256Hex),
    ]);
    expect(jobs[0]).toMatchObject({
      type: 'data.sync',
      args: [1],
      meta: { cron_name: 'sync', cron_triggered_at: '2026-01-01T00:00:05.000Z' },
    });
    expect((await scheduleFacts()).map((fact) => [fact.tick - T0, fact.runCount, fact.reason])).toEqual([
      [5 * SECOND, 1, undefined],
      [10 * SECOND, 2, undefined],
    ]);
    expect(await h.app.schedules.get(ANONYMOUS, 'sync')).toMatchObject({
      runCount: 2,
      lastRunAt: T0 + 10 * SECOND,
      nextRunAt: T0 + 15 * SECOND,
    });
  });

  it('skips a tick while the previous job has not finished (overlap skip), saying so', async () => {
    await h.app.schedules.register(ANONYMOUS, input());
    h.clock.advance(5 * SECOND);
    await h.app.schedules.fireDue();
    h.clock.advance(5 * SECOND);
    await h.app.schedules.fireDue();
    const [job] = await jobsOf('sync');
    expect(await jobsOf('sync')).toHaveLength(1);
    expect((await scheduleFacts()).at(-1)).toMatchObject({ tick: T0 + 10 * SECOND, reason: 'overlap_skip', jobId: job!.id });
  });

  it('after downtime fires the latest missed tick once under run_once, and under skip none later than the grace, recording the missed ones (earliest due first)', async () => {
    await h.app.schedules.register(ANONYMOUS, input({ overlap: 'allow' }));
    await h.app.schedules.register(ANONYMOUS, input({ name: 'strict', expression: '0 * * * * *', overlap: 'allow', missedTicks: 'skip' }));
    h.clock.advance(75 * SECOND);
    expect((await h.app.schedules.fireDue()).fired).toBe(2);
    expect((await jobsOf('sync')).map((job) => job.meta['cron_triggered_at'])).toEqual(['2026-01-01T00:01:15.000Z']);
    // The minute's tick is 15 s late, beyond MISSED_TICK_GRACE_MS: skip passes over it.
    expect(await jobsOf('strict')).toEqual([]);
    const missed = (await scheduleFacts()).filter((fact) => fact.reason === 'missed');
    expect(missed.map((fact) => [fact.name, fact.missedCount, fact.tick - T0, fact.lastMissed! - T0])).toEqual([
      ['sync', 14, 5 * SECOND, 70 * SECOND],
      ['strict', 1, 60 * SECOND, 60 * SECOND],
    ]);
    expect((await h.app.schedules.get(ANONYMOUS, 'strict')).nextRunAt).toBe(T0 + 120 * SECOND);
  });

  it('fires nothing while paused, and resumes from the first tick after now', async () => {
    await h.app.schedules.register(ANONYMOUS, input());
    expect((await h.app.schedules.setPaused(ANONYMOUS, 'sync', true)).nextRunAt).toBeUndefined();
    h.clock.advance(60 * SECOND);
    expect((await h.app.schedules.fireDue()).fired).toBe(0);
    expect((await h.app.schedules.setPaused(ANONYMOUS, 'sync', false)).nextRunAt).toBe(T0 + 65 * SECOND);
  });

  it('ticks @every from the registration that set it: an unchanged re-registration and a pause keep the grid, a new expression moves it', async () => {
    const registeredAt = T0 + 7_250;
    h.clock.advance(7_250);
    const { schedule } = await h.app.schedules.register(ANONYMOUS, input({ expression: '@every 10s', overlap: 'allow' }));
    expect(schedule).toMatchObject({ anchoredAt: registeredAt, nextRunAt: registeredAt + 10 * SECOND });
    h.clock.advance(4 * SECOND);
    const again = await h.app.schedules.register(ANONYMOUS, input({ expression: '@every 10s', overlap: 'allow', description: 'again' }));
    expect(again.schedule).toMatchObject({ anchoredAt: registeredAt, nextRunAt: registeredAt + 10 * SECOND });
    h.clock.advance(6 * SECOND);
    expect((await h.app.schedules.fireDue()).fired).toBe(1);
    await h.app.schedules.setPaused(ANONYMOUS, 'sync', true);
    h.clock.advance(33 * SECOND);
    expect(await h.app.schedules.setPaused(ANONYMOUS, 'sync', false)).toMatchObject({
      anchoredAt: registeredAt,
      nextRunAt: registeredAt + 50 * SECOND,
    });
    const moved = await h.app.schedules.register(ANONYMOUS, input({ expression: '@every 15s', overlap: 'allow' }));
    expect(moved.schedule).toMatchObject({ anchoredAt: h.clock.now(), nextRunAt: h.clock.now() + 15 * SECOND });
    expect((await jobsOf('sync')).map((job) => job.meta['cron_triggered_at'])).toEqual([
      new Date(registeredAt + 10 * SECOND).toISOString(),
    ]);
  });

  it('lets a queue-scoped caller see and steer only the schedules of its queues', async () => {
    const scoped: Principal = { ...ANONYMOUS, queues: new Set(['sync']) };
    await h.app.schedules.register(ANONYMOUS, input({ name: 'other', template: { type: 'x', args: [], queue: 'other' } }));
    await h.app.schedules.register(scoped, input());
    expect(
      (await refusal(h.app.schedules.register(scoped, input({ name: 'mine', template: { type: 'x', args: [], queue: 'other' } })))).code,
    ).toBe('permission_denied');
    expect((await h.app.schedules.list(scoped, { limit: 10 })).items.map((s) => s.name)).toEqual(['sync']);
    expect((await refusal(h.app.schedules.remove(scoped, 'other'))).code).toBe('not_found');
    await h.app.schedules.remove(scoped, 'sync');
  });
});
