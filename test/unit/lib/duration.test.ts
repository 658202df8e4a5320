import { parseDuration, parseGoDuration } from '../../../lib/duration';

describe('parseGoDuration', () => {
  it.each([
    ['30m', 1_800_000],
    ['1h30m', 5_400_000],
    ['2h45m30s', 9_930_000],
    ['45s', 45_000],
    ['500ms', 500],
    ['1h0m0s', 3_600_000],
    ['1.5s', 1_500],
    ['0.25h', 900_000],
    ['1.0010s', 1_001],
    ['30m1h', 5_400_000],
    ['0s', 0],
  ])('reads %j as Go does, in milliseconds', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(['', 'x', '30', '1h 30m', ' 30m', '-5s', '+5s', '7d', '1us', '10ns', '1.5', '.5s', '1.s', '1.0005s', '0.00000001h'])(
    'refuses %j',
    (text) => {
      expect(parseGoDuration(text)).toBeUndefined();
    },
  );

  it('leaves the operator durations as they were', () => {
    expect([parseDuration('7d'), parseDuration('2.5'), parseDuration('1h30m')]).toEqual([604_800_000, 2_500, undefined]);
  });
});
