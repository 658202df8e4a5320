import { formatIsoDuration, parseIsoDuration } from '../../../src/domain/iso-duration';

describe('ISO 8601 durations', () => {
  it.each([
    ['PT1S', 1_000],
    ['PT0.5S', 500],
    ['PT5M', 300_000],
    ['PT1H30M', 5_400_000],
    ['PT1M30.5S', 90_500],
    ['P1D', 86_400_000],
    ['P1W', 604_800_000],
    ['P1DT2H', 93_600_000],
  ])('parses %s as %i ms', (text, ms) => {
    expect(parseIsoDuration(text)).toBe(ms);
  });

  it.each(['1s', '', 'P', 'PT', 'P1M', 'P1Y', 'PT-1S', 'PT1.S', 'pt1s', 'PT1S ', 'T1S'])('refuses %j', (text) => {
    expect(parseIsoDuration(text)).toBeUndefined();
  });

  it.each([1_000, 500, 300_000, 5_400_000, 90_500, 3_600_000])('formats %i ms so that it parses back', (ms) => {
    expect(parseIsoDuration(formatIsoDuration(ms))).toBe(ms);
  });

  it('formats the canonical forms', () => {
    expect(formatIsoDuration(1_000)).toBe('PT1S');
    expect(formatIsoDuration(300_000)).toBe('PT5M');
    expect(formatIsoDuration(0)).toBe('PT0S');
  });
});
