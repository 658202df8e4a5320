import { limitEventWindowMs, limitHold, rateLimitKey, sampleHold } from '../../../src/domain/rate-limit-events';

const AT = Date.parse('2026-06-01T10:30:00.000Z');

describe('rate-limit event sampling', () => {
  const both = { maxActive: 3, rate: { limit: 5, periodMs: 60_000 } };

  it('names a queue\'s limits "queue:<name>" (ojs-rate-limiting 7.1)', () => {
    expect(rateLimitKey('email')).toBe('queue:email');
  });

  it('samples per rate period, and per second for short periods and limits without a rate', () => {
    expect(limitEventWindowMs(both)).toBe(60_000);
    expect(limitEventWindowMs({ rate: { limit: 5, periodMs: 10 } })).toBe(1_000);
    expect(limitEventWindowMs({ maxActive: 0 })).toBe(1_000);
  });

  it('says the rate holds when its window is full, else max active, else nothing', () => {
    expect(limitHold(both, 3, 5)).toEqual({ strategy: 'rate', limit: 5, current: 5 });
    expect(limitHold(both, 3, 4)).toEqual({ strategy: 'concurrency', limit: 3, current: 3 });
    expect(limitHold(both, 2, 4)).toBeUndefined();
    // A lowered rate counts the starts already made: more than its limit.
    expect(limitHold({ rate: { limit: 2, periodMs: 1_000 } }, 0, 7)).toEqual({ strategy: 'rate', limit: 2, current: 7 });
  });

  it('tells a hold that opens an episode once its window has passed, and none during an episode', () => {
    const hold = { strategy: 'concurrency', limit: 3, current: 3 } as const;
    const opened = sampleHold(undefined, hold, both, AT);
    expect(opened).toEqual({ quietUntil: AT + 60_000, held: 'concurrency' });
    expect(sampleHold(opened, hold, both, AT + 120_000)).toBeUndefined();
    const released = { quietUntil: AT + 60_000 };
    expect(sampleHold(released, hold, both, AT + 59_999)).toBeUndefined();
    expect(sampleHold(released, hold, both, AT + 60_000)).toEqual({ quietUntil: AT + 120_000, held: 'concurrency' });
  });
});
