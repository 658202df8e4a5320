import { CronerCalendar } from '../../../lib/cron-calendar';
import { sha256Hex } from '../../../lib/sha256';
import { OjsError } from '../../../src/domain/errors';
import { jobIdProblem } from '../../../src/domain/identifiers';
import { resolveScheduleSpec, type Schedule, type ScheduleInput } from '../../../src/domain/schedule';
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
