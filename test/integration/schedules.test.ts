import { randomUUID } from 'node:crypto';
import { Status } from 'nice-grpc';
import { JobState, type Job } from '../../gen/ojs/server/v1/job';
import { ListOrder } from '../../gen/ojs/server/v1/operator_service';
import type { DeepPartial, Schedule } from '../../gen/ojs/server/v1/schedule_service';
import { EventWatch } from '../support/event-watch';
import { listJobIds } from '../support/job-listing';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

const HOUR = 3_600_000;
const unique = (): string => randomUUID().slice(0, 8);

/**
 * Cron schedules through ScheduleService (ojs-cron 8) and the jobs their
 * ticks make, on a server whose clock the test moves: ticks fire when a
 * maintenance pass finds them due.
 */
describe('cron schedules', () => {
  // 2026-03-01 00:30 UTC: the next hourly tick is at 01:00.
  const clock = new ManualClock(Date.parse('2026-03-01T00:30:00.000Z'));
  const shared = shareServer({ clock, protocol: { streamKeepaliveMs: 50, heartbeatTimeoutMs: 100 * HOUR } });
  const schedules = () => shared.clients.schedules;

  /** An hourly schedule of its own name and queue. */
  const hourly = (more: DeepPartial<Schedule> = {}): DeepPartial<Schedule> => {
    const id = unique();
    return {
      name: `report-${id}`,
      cron: '0 * * * *',
      template: { type: 'report.build', queue: `cron-${id}`, args: [{ kind: 'hourly' }], priority: 5, retry: { maxAttempts: 7 } },
      ...more,
    };
  };
  const register = async (schedule: DeepPartial<Schedule>) => (await schedules().registerSchedule({ schedule })).schedule!;
  /** Moves the clock to the next whole hour and runs a maintenance pass (which fires the due ticks). */
  const nextHour = async (): Promise<void> => {
    clock.advance(HOUR - (clock.now() % HOUR));
    await shared.server.runMaintenance();
  };
  const jobsOf = async (name: string): Promise<Job[]> =>
    (await listJobIds(shared.clients, { schedule: name }, { order: ListOrder.LIST_ORDER_OLDEST_FIRST, pageSize: 1_000 })).jobs;

  it('registers a schedule (upsert), with its first tick and its template as sent, and gets it back', async () => {
    const spec = hourly({ timezone: 'Asia/Kolkata', description: 'hourly report' });
    const answer = await schedules().registerSchedule({ schedule: spec });
    expect(answer.created).toBe(true);
    const first = answer.schedule!;
    expect(first).toMatchObject({
      name: spec.name,
      cron: '0 * * * *',
      timezone: 'Asia/Kolkata',
      overlapPolicy: 'skip',
      missedTickPolicy: 'run_once',
      description: 'hourly report',
      paused: false,
      runCount: 0,
      lastRunAt: undefined,
    });
    // Kolkata is UTC+05:30: its whole hours fall on the half hours of UTC.
    expect(first.nextRunAt).toEqual(new Date('2026-03-01T01:30:00.000Z'));
    expect(first.template).toMatchObject({ type: 'report.build', queue: spec.template!.queue, priority: 5, args: [{ kind: 'hourly' }] });
    expect(first.template!.retry).toMatchObject({ maxAttempts: 7 });
    expect((await schedules().getSchedule({ name: spec.name! })).schedule).toEqual(first);

    const again = await schedules().registerSchedule({ schedule: { ...spec, cron: '15 * * * *', timezone: '' } });
    expect(again.created).toBe(false);
    expect(again.schedule).toMatchObject({ cron: '15 * * * *', timezone: 'UTC', createdAt: first.createdAt });
    expect(again.schedule!.nextRunAt).toEqual(new Date('2026-03-01T01:15:00.000Z'));
  });

  it('refuses a bad registration with INVALID_ARGUMENT naming every bad field', async () => {
    const failure = await rpcError(
      schedules().registerSchedule({
        schedule: {
          name: 'Bad Name',
          cron: '61 * * * *',
          template: { type: 'Not A Type', id: randomUUID() },
          overlapPolicy: 'sometimes',
          missedTickPolicy: 'never',
        },
      }),
    );
    expect(failure.code).toBe(Status.INVALID_ARGUMENT);
    expect(failure.fields).toEqual(
      expect.arrayContaining(['name', 'cron', 'overlap_policy', 'missed_tick_policy', 'template.id', 'template.type']),
    );
    for (const timezone of ['EST', '+05:00', 'UTC+5', 'Etc/GMT+5', 'Mars/Olympus_Mons']) {
      const zone = await rpcError(register(hourly({ timezone })));
      expect({ timezone, code: zone.code, fields: zone.fields }).toEqual({ timezone, code: Status.INVALID_ARGUMENT, fields: ['timezone'] });
    }
    expect((await rpcError(register(hourly({ template: undefined })))).fields).toContain('template.type');
    const uniqueWithSkip = hourly({ template: { type: 'x.y', unique: { keys: ['type'] } } });
    expect((await rpcError(register(uniqueWithSkip))).fields).toEqual(['template.unique']);
  });

  it('enqueues one job per tick, marked with the schedule and the tick, which ListJobs finds by schedule', async () => {
    const spec = await register(hourly({ overlapPolicy: 'allow' }));
    await nextHour();
    await nextHour();
    const jobs = await jobsOf(spec.name);
    expect(jobs.map((job) => job.meta)).toEqual([
      { cron_name: spec.name, cron_triggered_at: '2026-03-01T01:00:00.000Z' },
      { cron_name: spec.name, cron_triggered_at: '2026-03-01T02:00:00.000Z' },
    ]);
    expect(jobs.every((job) => job.queue === spec.template!.queue && job.priority === 5 && job.retry!.maxAttempts === 7)).toBe(true);
    const after = (await schedules().getSchedule({ name: spec.name })).schedule!;
    expect(after).toMatchObject({ runCount: 2, lastRunAt: new Date('2026-03-01T02:00:00.000Z') });
    expect(after.nextRunAt).toEqual(new Date('2026-03-01T03:00:00.000Z'));
    // A job that merely claims the name in its meta is the schedule's too: the name is the correlation key (ojs-cron 6.3).
    expect(await jobsOf(`absent-${unique()}`)).toEqual([]);
    expect((await rpcError(jobsOf('Not A Name'))).fields).toEqual(['filter.schedule']);
  });

  it('skips a tick while the previous job is unfinished (skip), and says so on WatchEvents', async () => {
    const spec = await register(hourly());
    const watch = shared.closeAfterTest(EventWatch.open(shared.clients, { types: ['cron.*'], jobTypes: ['report.build'] }));
    await watch.opened();
    await nextHour();
    await nextHour();
    const [job, ...others] = await jobsOf(spec.name);
    expect(others).toEqual([]);
    const events = await watch.until(
      (seen) => seen.filter((event) => event.subject === spec.name).length >= 2,
      () => 'a triggered and a skipped tick',
    );
    const mine = events.filter((event) => event.subject === spec.name);
    expect(
      mine.map((event): unknown[] => [event.type, event.data?.['reason'], event.data?.['job_id'] ?? event.data?.['active_job_id']]),
    ).toEqual([
      ['cron.triggered', undefined, job!.id],
      ['cron.skipped', 'overlap_skip', job!.id],
    ]);
    expect((await schedules().getSchedule({ name: spec.name })).schedule!.runCount).toBe(1);

    // Once the job finishes, the next tick runs again.
    const worker = await TestWorker.register(shared.clients, { queues: [spec.template!.queue] });
    const fetch = shared.closeAfterTest(worker.openFetch());
    await worker.ack((await fetch.nextMatching((m) => m.deliveries.length > 0)).deliveries[0]!);
    await nextHour();
    // The completed job is pruned by the same pass (an hour is past its retention); the new one may already be on the worker.
    const [next, ...more] = await jobsOf(spec.name);
    expect([next!.id === job!.id, more]).toEqual([false, []]);
    expect(next!.meta!['cron_triggered_at']).toBe(new Date(clock.now()).toISOString());
  });

  it('cancels the unfinished job and enqueues the new one under cancel_previous', async () => {
    const spec = await register(hourly({ overlapPolicy: 'cancel_previous' }));
    await nextHour();
    const [first] = await jobsOf(spec.name);
    await nextHour();
    const jobs = await jobsOf(spec.name);
    expect(jobs.map((job) => [job.id, job.state])).toEqual(
      expect.arrayContaining([
        [first!.id, JobState.JOB_STATE_CANCELLED],
        [expect.any(String), JobState.JOB_STATE_AVAILABLE],
      ]),
    );
    expect(jobs).toHaveLength(2);
  });

  it('pauses a schedule (no next run, no ticks) and resumes it from the first tick after now', async () => {
    const spec = await register(hourly({ overlapPolicy: 'allow' }));
    const paused = (await schedules().pauseSchedule({ name: spec.name })).schedule!;
    expect(paused).toMatchObject({ paused: true, nextRunAt: undefined });
    await nextHour();
    expect(await jobsOf(spec.name)).toEqual([]);
    expect((await schedules().pauseSchedule({ name: spec.name })).schedule).toMatchObject({ paused: true });

    clock.advance(HOUR / 2);
    const resumed = (await schedules().resumeSchedule({ name: spec.name })).schedule!;
    expect(resumed.paused).toBe(false);
    expect(resumed.nextRunAt!.getTime()).toBe(clock.now() - (clock.now() % HOUR) + HOUR);
    await nextHour();
    expect(await jobsOf(spec.name)).toHaveLength(1);

    const registeredPaused = await register(hourly({ paused: true }));
    expect(registeredPaused).toMatchObject({ paused: true, nextRunAt: undefined });
  });

  it('lists schedules in name order, page by page, running or paused ones only when asked', async () => {
    const prefix = `list-${unique()}`;
    const names = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
    for (const name of names) await register(hourly({ name, paused: name.endsWith('-b') }));
    const listed: Schedule[] = [];
    let pageToken = '';
    do {
      const page = await schedules().listSchedules({ pageSize: 2, pageToken });
      listed.push(...page.schedules);
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    const mine = (schedulesOf: Schedule[]) => schedulesOf.map((s) => s.name).filter((name) => name.startsWith(prefix));
    expect(mine(listed)).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    const all = async (paused: boolean) => mine((await schedules().listSchedules({ pageSize: 1_000, paused })).schedules);
    expect(await all(true)).toEqual([`${prefix}-b`]);
    expect(await all(false)).toEqual([`${prefix}-a`, `${prefix}-c`]);
    expect((await rpcError(schedules().listSchedules({ pageToken: 'NOT A NAME' }))).code).toBe(Status.INVALID_ARGUMENT);
  });

  it('deletes a schedule, keeping the jobs it made; an unknown name is NOT_FOUND', async () => {
    const spec = await register(hourly({ overlapPolicy: 'allow' }));
    await nextHour();
    await schedules().deleteSchedule({ name: spec.name });
    await nextHour();
    expect(await jobsOf(spec.name)).toHaveLength(1);
    for (const call of [
      () => schedules().getSchedule({ name: spec.name }),
      () => schedules().deleteSchedule({ name: spec.name }),
      () => schedules().pauseSchedule({ name: spec.name }),
      () => schedules().resumeSchedule({ name: spec.name }),
    ]) {
      expect(await rpcError(call)).toMatchObject({ code: Status.NOT_FOUND, metadata: { schedule_name: spec.name } });
    }
  });

  it('ticks @every from its registration, not on clock multiples, and refuses an interval under a second (ojs-cron 4.1, 7.3)', async () => {
    // A time that is on no minute: the ticks follow it, whatever the zone.
    clock.advance(17 * 60_000 + 23_456);
    const registeredAt = clock.now();
    const interval = 90 * 60_000;
    const spec = await register(hourly({ cron: '@every 90m', timezone: 'Asia/Kolkata', overlapPolicy: 'allow' }));
    expect(spec.nextRunAt).toEqual(new Date(registeredAt + interval));
    clock.advance(interval);
    await shared.server.runMaintenance();
    const jobs = await jobsOf(spec.name);
    expect(jobs.map((job): unknown => job.meta!['cron_triggered_at'])).toEqual([new Date(registeredAt + interval).toISOString()]);
    expect((await schedules().getSchedule({ name: spec.name })).schedule!.nextRunAt).toEqual(new Date(registeredAt + 2 * interval));

    const tooOften = await rpcError(register(hourly({ cron: '@every 500ms' })));
    expect(tooOften).toMatchObject({ code: Status.INVALID_ARGUMENT, fields: ['cron'] });
    expect(tooOften.message).toContain('at most once a second');
  });
});
