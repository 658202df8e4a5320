import { CronerCalendar, EVERY_MAX_MS } from '../../../lib/cron-calendar';

const calendar = new CronerCalendar();
const NY = 'America/New_York';
const iso = (at: number | undefined): string | undefined => (at === undefined ? undefined : new Date(at).toISOString());

/** The first `n` occurrences after `from` (an interval expression's anchored at `anchor`, by default `from`). */
function occurrences(expression: string, timezone: string, from: string, n: number, anchor = from): (string | undefined)[] {
  const found: (string | undefined)[] = [];
  let at = Date.parse(from);
  for (let i = 0; i < n; i++) {
    const next = calendar.nextAfter(expression, timezone, at, Date.parse(anchor));
    found.push(iso(next));
    if (next === undefined) break;
    at = next;
  }
  return found;
}

describe('CronerCalendar', () => {
  it('does not fire a 02:30 schedule on the day a spring-forward skips 02:30 (ojs-cron 5.2)', () => {
    // 2026-03-08: New York jumps from 02:00 EST to 03:00 EDT.
    expect(occurrences('30 2 * * *', NY, '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
      '2026-03-10T06:30:00.000Z',
    ]);
  });

  it('fires a 01:30 schedule once, at the first 01:30, on the day a fall-back repeats it', () => {
    // 2026-11-01: New York falls back from 02:00 EDT to 01:00 EST.
    expect(occurrences('30 1 * * *', NY, '2026-10-31T12:00:00Z', 2)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });

  it('fires each wall-clock time of a repeated hour once, interval schedules too', () => {
    expect(occurrences('*/30 1,2 * * *', NY, '2026-11-01T04:00:00Z', 5)).toEqual([
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T05:30:00.000Z',
      // 01:00 and 01:30 EST repeat the wall-clock times above: passed over.
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T07:30:00.000Z',
      '2026-11-02T06:00:00.000Z',
    ]);
  });

  it('knows the macros and the optional seconds field', () => {
    const from = '2026-01-01T00:30:00Z';
    expect(occurrences('@hourly', 'UTC', from, 1)).toEqual(['2026-01-01T01:00:00.000Z']);
    expect(occurrences('@daily', 'UTC', from, 1)).toEqual(['2026-01-02T00:00:00.000Z']);
    expect(occurrences('@midnight', 'UTC', from, 1)).toEqual(['2026-01-02T00:00:00.000Z']);
    expect(occurrences('@weekly', 'UTC', from, 1)).toEqual(['2026-01-04T00:00:00.000Z']);
    expect(occurrences('@monthly', 'UTC', from, 1)).toEqual(['2026-02-01T00:00:00.000Z']);
    expect(occurrences('@yearly', 'UTC', from, 1)).toEqual(['2027-01-01T00:00:00.000Z']);
    expect(occurrences('@annually', 'UTC', from, 1)).toEqual(['2027-01-01T00:00:00.000Z']);
    expect(occurrences('*/20 * * * * *', 'UTC', from, 2)).toEqual(['2026-01-01T00:30:20.000Z', '2026-01-01T00:30:40.000Z']);
    expect(occurrences('0 9 * * MON-FRI', NY, '2026-01-02T15:00:00Z', 1)).toEqual(['2026-01-05T14:00:00.000Z']);
  });

  it.each([
    ['*/0 * * * *', 'cron'],
    ['60 * * * *', 'cron'],
    ['* * 32 * *', 'cron'],
    ['', 'cron'],
    ['* * * * * * *', 'cron'],
  ])('refuses the expression %j under the field cron', (expression, field) => {
    expect(calendar.problem(expression, 'UTC')?.field).toBe(field);
  });

  it('ticks @every duration from its anchor, not on clock multiples, in any zone, across a fall-back (ojs-cron 4.1)', () => {
    const anchor = '2026-01-01T00:07:13.250Z';
    expect(occurrences('@every 90m', 'UTC', anchor, 3)).toEqual([
      '2026-01-01T01:37:13.250Z',
      '2026-01-01T03:07:13.250Z',
      '2026-01-01T04:37:13.250Z',
    ]);
    // From any time: the first tick of the anchor's grid after it, never the anchor itself.
    expect(occurrences('@every 1h30m', NY, '2026-01-01T03:07:13.250Z', 1, anchor)).toEqual(['2026-01-01T04:37:13.250Z']);
    expect(occurrences('@every 45s', 'UTC', '2025-12-31T00:00:00Z', 1, anchor)).toEqual(['2026-01-01T00:07:58.250Z']);
    expect(occurrences('@every 2h45m30s', 'UTC', anchor, 1)).toEqual(['2026-01-01T02:52:43.250Z']);
    // New York falls back on 2026-11-01: an interval keeps its spacing in absolute time.
    expect(occurrences('@every 1h', NY, '2026-11-01T04:30:00Z', 3)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T07:30:00.000Z',
    ]);
  });

  it('knows the interval of @every and of nothing else', () => {
    expect(calendar.intervalMs('@every 1h30m')).toBe(90 * 60_000);
    expect(calendar.intervalMs('@every 1.5s')).toBe(1_500);
    expect(calendar.intervalMs('@every 8784h')).toBe(EVERY_MAX_MS);
    expect(calendar.intervalMs('@hourly')).toBeUndefined();
    expect(calendar.intervalMs('*/5 * * * * *')).toBeUndefined();
    expect(calendar.intervalMs('@every 500ms')).toBeUndefined();
  });

  it.each([
    ['@every 500ms', 'at least 1s: schedules are evaluated at most once a second (ojs-cron 7.3)'],
    ['@every 0s', 'at least 1s'],
    ['@every x', 'takes a duration such as 30m'],
    ['@every', 'takes a duration such as 30m'],
    ['@every 1h 30m', 'takes a duration such as 30m'],
    ['@every 5d', 'takes a duration such as 30m'],
    ['@every 1.0005s', 'in whole milliseconds'],
    ['@every 8784h1ms', 'at most 366 days'],
    ['@every 9999999999999999999999h', 'at most 366 days'],
  ])('refuses the interval %j, saying why', (expression, why) => {
    const problem = calendar.problem(expression, 'UTC');
    expect(problem?.field).toBe('cron');
    expect(problem?.description).toContain(why);
  });

  it('validates the zone of an interval expression too', () => {
    expect(calendar.problem('@every 30m', 'America/Chicago')).toBeUndefined();
    expect(calendar.problem('@every 30m', 'EST')?.field).toBe('timezone');
  });

  it.each(['+05:00', 'UTC+5', 'EST', 'Etc/GMT+5', 'Mars/Olympus_Mons'])('refuses the zone %j', (zone) => {
    expect(calendar.problem('* * * * *', zone)?.field).toBe('timezone');
  });

  it.each(['UTC', NY, 'Europe/London', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires'])('accepts the zone %j', (zone) => {
    expect(calendar.problem('* * * * *', zone)).toBeUndefined();
  });
});
