/**
 * ISO 8601 durations as the retry policy uses them ("PT1S", "PT0.5S",
 * "PT5M", "P1D"). Date components are accepted with fixed lengths (a day is
 * 24 h, a week 7 days); months and years are refused because their length
 * varies, which makes them meaningless as retry delays.
 */
const PATTERN =
  /^P(?!$)(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

const MS_PER = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1_000 };

/** Milliseconds in one captured component of a duration (absent: 0). */
function part(value: string | undefined, unitMs: number): number {
  return value === undefined ? 0 : Number(value) * unitMs;
}

/** Milliseconds in `text`, or undefined when it is not a supported ISO 8601 duration. */
export function parseIsoDuration(text: string): number | undefined {
  const match = PATTERN.exec(text);
  if (match === null) return undefined;
  const [, weeks, days, hours, minutes, seconds] = match;
  const total =
    part(weeks, MS_PER.week) +
    part(days, MS_PER.day) +
    part(hours, MS_PER.hour) +
    part(minutes, MS_PER.minute) +
    part(seconds, MS_PER.second);
  return Math.round(total);
}

/** Canonical ISO 8601 form of a duration: "PT1S", "PT5M", "PT1H30M", "PT0.5S". */
export function formatIsoDuration(ms: number): string {
  if (ms === 0) return 'PT0S';
  let rest = ms;
  const hours = Math.floor(rest / MS_PER.hour);
  rest -= hours * MS_PER.hour;
  const minutes = Math.floor(rest / MS_PER.minute);
  rest -= minutes * MS_PER.minute;
  const seconds = rest / MS_PER.second;
  return `PT${hours > 0 ? `${hours}H` : ''}${minutes > 0 ? `${minutes}M` : ''}${seconds > 0 ? `${seconds}S` : ''}`;
}
