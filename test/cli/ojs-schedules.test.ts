import { randomUUID } from 'node:crypto';
import { ManualClock } from '../support/manual-clock';
import { shareServer } from '../support/shared-server';
import { ojs, ojsJson } from './ojs-command';

const HOUR = 3_600_000;

/**
 * `ojs schedules` with the real `ojs` binary (dist/ must be fresh: `npm run
 * build`, which `npm test` runs first) against a real server. The server's
 * clock starts three hours before the wall clock the command reads, so that
 * a tick the test fires by moving it shows as some hours ago. Each test
 * works on schedules of its own, most of them yearly so that no move of the
 * clock fires them.
 */
describe('the ojs command and cron schedules', () => {
  const clock = new ManualClock(Date.now() - 3 * HOUR);
  const shared = shareServer({ clock });
  const address = (): string => shared.server.address;
  const newName = (): string => `cli-${randomUUID().slice(0, 8)}`;
  const get = async (name: string) => (await shared.clients.schedules.getSchedule({ name })).schedule!;

  it('adds a schedule from its flags, says it was created, and replaces all of it on a second add, saying it was updated', async () => {
    const name = newName();
    // prettier-ignore
    const added = await ojs(address(), [
      'schedules', 'add', name, '0 9 * * 1-5', 'report.generate', '--timezone', 'America/New_York', '--queue', 'reports',
      '--args', '["daily", 3]', '--meta', '{"tenant":"acme"}', '--priority', '5', '--max-attempts', '7',
      '--overlap', 'cancel_previous', '--missed-ticks', 'skip', '--description', 'weekday report',
    ]);
    expect([added.code, added.stderr]).toEqual([0, `created schedule ${name}\n`]);
    for (const line of [
      `name +${name}`,
      'cron +0 9 \\* \\* 1-5',
      'timezone +America/New_York',
      'paused +no',
      'overlap +cancel_previous',
      'missed ticks +skip',
      // Relative to the wall clock, which is ahead of the server's: the next tick may be in the past.
      'next run +\\S+Z \\(.+\\)',
      'last run +-',
      'runs +0',
      'type +report.generate',
      'queue +reports',
      'args +\\["daily",3\\]',
      'job options +\\{"meta":\\{"tenant":"acme"\\},"priority":5,"retry":\\{"max_attempts":7,.*\\}\\}',
      'description +weekday report',
    ])
      expect(added.stdout).toMatch(new RegExp(`^${line}$`, 'm'));
    expect(await get(name)).toMatchObject({
      cron: '0 9 * * 1-5',
      timezone: 'America/New_York',
      overlapPolicy: 'cancel_previous',
      missedTickPolicy: 'skip',
      description: 'weekday report',
      paused: false,
      template: { type: 'report.generate', queue: 'reports', args: ['daily', 3], meta: { tenant: 'acme' }, priority: 5 },
    });
    expect((await get(name)).template?.retry?.maxAttempts).toBe(7);

    const replaced = await ojs(address(), ['--json', 'schedules', 'add', name, '@yearly', 'report.yearly', '--paused']);
    expect([replaced.code, replaced.stderr]).toEqual([0, `updated schedule ${name}\n`]);
    const stored = await get(name);
    // The template holds what the flags set, and nothing of an envelope's system-managed fields.
    expect(JSON.parse(replaced.stdout)).toEqual({
      name,
      cron: '@yearly',
      timezone: 'UTC',
      template: { type: 'report.yearly' },
      overlap_policy: 'skip',
      missed_tick_policy: 'run_once',
      description: '',
      paused: true,
      created_at: stored.createdAt?.toISOString(),
      updated_at: stored.updatedAt?.toISOString(),
      run_count: 0,
    });
  });

  it('gets a schedule, and pauses and resumes it: paused it has no next run, resumed it has one again', async () => {
    const name = newName();
    await ojs(address(), ['schedules', 'add', name, '@yearly', 'a.b']);
    const [got] = await ojsJson(address(), ['schedules', 'get', name]);
    const nextRunAt = (await get(name)).nextRunAt;
    expect(nextRunAt).toBeDefined();
    expect(got).toMatchObject({ name, cron: '@yearly', paused: false, next_run_at: nextRunAt?.toISOString() });

    for (let time = 0; time < 2; time++) {
      const paused = await ojs(address(), ['schedules', 'pause', name]);
      expect([paused.code, paused.stderr]).toEqual([0, '']);
      expect(paused.stdout).toMatch(/^paused +yes$/m);
      expect(paused.stdout).toMatch(/^next run +-$/m);
    }
    expect(await get(name)).toMatchObject({ paused: true, nextRunAt: undefined });

    const [resumed] = await ojsJson(address(), ['schedules', 'resume', name]);
    expect(resumed).toMatchObject({ name, paused: false, next_run_at: (await get(name)).nextRunAt?.toISOString() });
    expect(typeof resumed!['next_run_at']).toBe('string');
    expect((await ojs(address(), ['schedules', 'get', name])).stdout).toMatch(/^paused +no$/m);
  });

  it('lists every schedule with its next and last run and its runs, only the paused or running ones when asked, and one JSON object per schedule with --json', async () => {
    const hourly = newName();
    const paused = newName();
    const queue = newName();
    await ojs(address(), ['schedules', 'add', hourly, '0 * * * *', 'report.hourly', '-q', queue, '--overlap', 'allow']);
    await ojs(address(), ['schedules', 'add', paused, '@yearly', 'a.b', '--paused']);
    // The next whole hour of the server's clock, two to three hours before the wall clock: the hourly schedule's first tick.
    clock.advance(HOUR - (clock.now() % HOUR));
    await shared.server.runMaintenance();

    const table = await ojs(address(), ['schedules', 'list']);
    expect([table.code, table.stderr]).toEqual([0, '']);
    expect(table.stdout).toMatch(/^NAME +CRON +TIMEZONE +QUEUE +TYPE +OVERLAP +PAUSED +NEXT RUN +LAST RUN +RUNS$/m);
    expect(table.stdout).toMatch(
      new RegExp(`^${hourly} +0 \\* \\* \\* \\* +UTC +${queue} +report.hourly +allow +no +[12]h ago +[23]h ago +1$`, 'm'),
    );
    expect(table.stdout).toMatch(new RegExp(`^${paused} +@yearly +UTC +default +a.b +skip +yes +- +- +0$`, 'm'));

    const names = async (...flags: string[]): Promise<string[]> =>
      (await ojsJson(address(), ['schedules', 'list', ...flags])).map((schedule) => String(schedule['name']));
    const all = await names();
    expect(all).toEqual(expect.arrayContaining([hourly, paused]));
    // Name order, as the server lists them: by code unit, not by locale.
    expect(all).toEqual(all.toSorted((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(await names('--paused')).toContain(paused);
    expect(await names('--paused')).not.toContain(hourly);
    expect(await names('--running')).toContain(hourly);
    expect(await names('--running')).not.toContain(paused);

    const listed = (await ojsJson(address(), ['schedules', 'list'])).find((schedule) => schedule['name'] === hourly);
    expect(listed).toMatchObject({ run_count: 1, last_run_at: (await get(hourly)).lastRunAt?.toISOString() });
    expect(listed).toMatchObject({ template: { type: 'report.hourly', queue } });
  });

  it('lists every page of schedules, more than one page holds', async () => {
    const prefix = newName();
    const count = 1_001;
    for (let start = 0; start < count; start += 100) {
      const batch = Array.from({ length: Math.min(100, count - start) }, (_, i) => `${prefix}-${String(start + i).padStart(4, '0')}`);
      await Promise.all(
        batch.map((name) => shared.clients.schedules.registerSchedule({ schedule: { name, cron: '@yearly', template: { type: 'a.b' } } })),
      );
    }
    const listed = (await ojsJson(address(), ['schedules', 'list'])).map((schedule) => String(schedule['name']));
    expect(listed.filter((name) => name.startsWith(`${prefix}-`))).toHaveLength(count);
  });

  it('deletes a schedule, and exits 3 for a schedule that does not exist', async () => {
    const name = newName();
    await ojs(address(), ['schedules', 'add', name, '@yearly', 'a.b']);
    expect(await ojs(address(), ['schedules', 'delete', name])).toEqual({ code: 0, stdout: `deleted schedule ${name}\n`, stderr: '' });
    for (const command of ['get', 'pause', 'resume', 'delete']) {
      const missing = await ojs(address(), ['schedules', command, name]);
      expect([command, missing.code, missing.stdout]).toEqual([command, 3, '']);
      expect(missing.stderr).toContain('NOT_FOUND');
    }
    const other = newName();
    await ojs(address(), ['schedules', 'add', other, '@yearly', 'a.b']);
    expect(await ojsJson(address(), ['schedules', 'delete', other])).toEqual([{ name: other, deleted: true }]);
  });

  it("refuses a bad expression with exit 4 and the server's message, and a malformed command line with exit 2", async () => {
    const name = newName();
    const badCron = await ojs(address(), ['schedules', 'add', name, '61 * * * *', 'a.b']);
    expect([badCron.code, badCron.stdout]).toEqual([4, '']);
    // The server's message, naming the field and the bad value.
    expect(badCron.stderr).toMatch(/^ojs: cron: .*\b61\b.*\(INVALID_ARGUMENT\)\n$/);
    const badZone = await ojs(address(), ['schedules', 'add', name, '@daily', 'a.b', '--timezone', 'EST', '--overlap', 'sometimes']);
    expect(badZone.code).toBe(4);
    expect(badZone.stderr).toMatch(/timezone.*overlap_policy|overlap_policy.*timezone/);
    for (const [flags, message] of [
      [['--args', '{"a":1}'], '--args: a JSON array'],
      [['--args', 'nope'], '--args: not JSON'],
      [['--meta', '[1]'], '--meta: a JSON object'],
      [['--priority', 'high'], '--priority: "high" is not a whole number'],
    ] as const) {
      const run = await ojs(address(), ['schedules', 'add', name, '@daily', 'a.b', ...flags]);
      expect([flags, run.code, run.stderr]).toEqual([flags, 2, expect.stringContaining(message)]);
    }
    expect((await ojs(address(), ['schedules', 'list', '--paused', '--running'])).code).toBe(2);
    expect((await ojs(address(), ['schedules', 'add', name, '@daily'])).code).toBe(2);
    expect((await ojs(address(), ['schedules', 'get', name])).code).toBe(3);
    for (const level of [['schedules'], ['schedules', 'add']]) {
      const help = await ojs(address(), [...level, '--help']);
      expect([level, help.code, help.stdout]).toEqual([level, 0, expect.stringContaining('Usage: ojs schedules')]);
    }
  });
});
