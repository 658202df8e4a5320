import { CronerCalendar } from '../../../lib/cron-calendar';
import { sha256Hex } from '../../../lib/sha256';
import { OjsError } from '../../../src/domain/errors';
import { jobIdProblem } from '../../../src/domain/identifiers';
import { resolveScheduleSpec, scheduleAnchor, type CronCalendar, type Schedule, type ScheduleInput } from '../../../src/domain/schedule';
import { planTicks, tickJobId, tickSubmission, UNFINISHED_STATES } from '../../../src/domain/schedule-tick';

const calendar = new CronerCalendar();
const at = (text: string): number => Date.parse(text);

function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    name: 'nightly',
    expression: '* * * * * *',
    timezone: 'UTC',
    template: { type: 'report.generate', args: [] },
    overlap: 'skip',
    missedTicks: 'run_once',
    description: '',
    isPaused: false,
    createdAt: 0,
    updatedAt: 0,
    revision: 1,
    anchoredAt: 0,
    nextRunAt: at('2026-01-01T00:00:01Z'),
    runCount: 0,
    ...overrides,
  };
}

describe('planTicks', () => {
  it('fires the due tick and moves next_run_at past now', () => {
    expect(planTicks(schedule(), at('2026-01-01T00:00:01.300Z'), calendar, 5_000)).toEqual({
      tick: at('2026-01-01T00:00:01Z'),
      nextRunAt: at('2026-01-01T00:00:02Z'),
    });
  });

  it('plans nothing before the tick, or while paused', () => {
    expect(planTicks(schedule(), at('2026-01-01T00:00:00.900Z'), calendar, 5_000)).toBeUndefined();
    expect(planTicks(schedule({ isPaused: true }), at('2026-01-01T00:00:05Z'), calendar, 5_000)).toBeUndefined();
  });

  it('runs once after a gap: the latest tick fires, the earlier ones are missed', () => {
    expect(planTicks(schedule(), at('2026-01-01T00:00:10.500Z'), calendar, 5_000)).toEqual({
      tick: at('2026-01-01T00:00:10Z'),
      missed: { first: at('2026-01-01T00:00:01Z'), last: at('2026-01-01T00:00:09Z'), count: 9, isCountAtLeast: false },
      nextRunAt: at('2026-01-01T00:00:11Z'),
    });
  });

  it('under the skip policy fires no tick later than the grace', () => {
    const late = schedule({ missedTicks: 'skip', expression: '0 * * * *', nextRunAt: at('2026-01-01T01:00:00Z') });
    expect(planTicks(late, at('2026-01-01T03:30:00Z'), calendar, 60_000)).toEqual({
      missed: { first: at('2026-01-01T01:00:00Z'), last: at('2026-01-01T03:00:00Z'), count: 3, isCountAtLeast: false },
      nextRunAt: at('2026-01-01T04:00:00Z'),
    });
    expect(planTicks(late, at('2026-01-01T01:00:30Z'), calendar, 60_000)?.tick).toBe(at('2026-01-01T01:00:00Z'));
  });

  it('runs the latest tick once after a gap too long to count, counting at least so many missed', () => {
    const plan = planTicks(schedule(), at('2026-01-02T00:00:00.500Z'), calendar, 5_000);
    expect(plan?.tick).toBe(at('2026-01-02T00:00:00Z'));
    expect(plan?.missed).toMatchObject({ first: at('2026-01-01T00:00:01Z'), count: 1_000, isCountAtLeast: true });
    expect(plan?.nextRunAt).toBe(at('2026-01-02T00:00:01Z'));
  });
});

describe('planTicks of an interval expression (@every)', () => {
  const anchoredAt = at('2026-01-01T00:00:00.250Z');
  const every = (overrides: Partial<Schedule> = {}): Schedule =>
    schedule({ expression: '@every 1s', anchoredAt, nextRunAt: anchoredAt + 1_000, ...overrides });
  /** The real calendar, counting the occurrences asked of it. */
  const counting = (): CronCalendar & { calls: number } => ({
    calls: 0,
    problem: (expression, timezone) => calendar.problem(expression, timezone),
    nextAfter(expression, timezone, after, anchor) {
      this.calls += 1;
      return calendar.nextAfter(expression, timezone, after, anchor);
    },
    intervalMs: (expression) => calendar.intervalMs(expression),
  });

  it('after a year-long gap fires the latest grid tick once, counting every missed one, without walking them', () => {
    const counted = counting();
    const now = at('2027-01-01T00:00:00.900Z');
    expect(planTicks(every(), now, counted, 5_000)).toEqual({
      tick: at('2027-01-01T00:00:00.250Z'),
      missed: { first: anchoredAt + 1_000, last: at('2026-12-31T23:59:59.250Z'), count: 365 * 86_400 - 1, isCountAtLeast: false },
      nextRunAt: at('2027-01-01T00:00:01.250Z'),
    });
    expect(counted.calls).toBe(1);
  });

  it('fires the due tick alone on time, and under skip passes over a latest tick later than the grace, counting it', () => {
    expect(planTicks(every(), anchoredAt + 1_000, calendar, 5_000)).toEqual({ tick: anchoredAt + 1_000, nextRunAt: anchoredAt + 2_000 });
    const hourly = every({ expression: '@every 1h', nextRunAt: anchoredAt + 3_600_000, missedTicks: 'skip' });
    expect(planTicks(hourly, anchoredAt + 3 * 3_600_000 + 60_000, calendar, 5_000)).toEqual({
      missed: { first: anchoredAt + 3_600_000, last: anchoredAt + 3 * 3_600_000, count: 3, isCountAtLeast: false },
      nextRunAt: anchoredAt + 4 * 3_600_000,
    });
  });
});

describe('scheduleAnchor', () => {
  it('keeps the anchor of an unchanged expression and re-anchors a new one at now', () => {
    const before = { expression: '@every 90m', anchoredAt: 1_000 };
    expect(scheduleAnchor(before, '@every 90m', 5_000)).toBe(1_000);
    expect(scheduleAnchor(before, '@every 1h30m', 5_000)).toBe(5_000);
    expect(scheduleAnchor(undefined, '@every 90m', 5_000)).toBe(5_000);
  });
});

describe('tick jobs', () => {
  it("names a tick's job with the same valid UUIDv7 every time, and other ticks differently", () => {
    const id = tickJobId('nightly', at('2026-01-01T00:00:01Z'), sha256Hex);
    expect(jobIdProblem(id)).toBeUndefined();
    expect(tickJobId('nightly', at('2026-01-01T00:00:01Z'), sha256Hex)).toBe(id);
    expect(tickJobId('nightly', at('2026-01-01T00:00:02Z'), sha256Hex)).not.toBe(id);
    expect(tickJobId('weekly', at('2026-01-01T00:00:01Z'), sha256Hex)).not.toBe(id);
  });

  it('marks the job with the schedule and tick, and turns the overlap policy into a unique policy', () => {
    const tick = at('2026-01-01T00:00:01Z');
    const skip = tickSubmission(schedule({ template: { type: 'a.b', args: [], meta: { team: 'x' } } }), tick);
    expect(skip.meta).toEqual({ team: 'x', cron_name: 'nightly', cron_triggered_at: '2026-01-01T00:00:01.000Z' });
    expect(skip.unique).toEqual({ keys: ['meta'], metaKeys: ['cron_name'], states: UNFINISHED_STATES, onConflict: 'ignore' });
    expect(tickSubmission(schedule({ overlap: 'cancel_previous' }), tick).unique?.onConflict).toBe('replace');
    expect(tickSubmission(schedule({ overlap: 'allow' }), tick).unique).toBeUndefined();
  });
});

describe('resolveScheduleSpec', () => {
  const input = (overrides: Partial<ScheduleInput> = {}): ScheduleInput => ({
    name: 'nightly',
    expression: '30 2 * * *',
    timezone: '',
    template: { type: 'report.generate', args: [] },
    overlap: '',
    missedTicks: '',
    description: '',
    isPaused: false,
    ...overrides,
  });

  it('resolves the defaults of ojs-cron: UTC, overlap skip, missed ticks run once', () => {
    expect(resolveScheduleSpec(input(), calendar, () => [])).toMatchObject({ timezone: 'UTC', overlap: 'skip', missedTicks: 'run_once' });
  });

  it('names every bad field', () => {
    let caught: unknown;
    try {
      resolveScheduleSpec(
        input({
          name: 'Bad Name',
          expression: '61 * * * *',
          overlap: 'sometimes',
          missedTicks: 'never',
          template: { type: 'x', args: [], id: 'y' },
        }),
        calendar,
        () => [{ field: 'template.type', description: 'bad' }],
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OjsError);
    expect((caught as OjsError).code).toBe('invalid_request');
    const fields = (caught as OjsError).fieldViolations.map((violation) => violation.field);
    expect(fields).toEqual(['name', 'cron', 'overlap_policy', 'missed_tick_policy', 'template.id', 'template.type']);
  });

  it('refuses a zone that is an offset', () => {
    expect(() => resolveScheduleSpec(input({ timezone: '+05:00' }), calendar, () => [])).toThrow(OjsError);
  });
});
