import { Cron } from 'croner';
import { parseGoDuration } from './duration';

/** A refused field of a registration: "cron" or "timezone". */
export interface CalendarProblem {
  field: 'cron' | 'timezone';
  description: string;
}

/** Parsed expressions kept for reuse; the cache is emptied when full (a pass re-parses what it needs). */
const CACHE_MAX = 1_000;
/** No zone changes its offset twice within this: the look-back that finds the offset a fall-back leaves. */
const TRANSITION_LOOKBACK_MS = 3 * 3_600_000;
/** An interval expression (ojs-cron 4.1): "@every" and a Go duration. */
const EVERY = /^@every(?:\s+(.*))?$/;
/** The shortest interval: schedules are evaluated at most once a second (ojs-cron 7.3). */
export const EVERY_MIN_MS = 1_000;
/** The longest interval, 366 days: longer belongs to a calendar expression (@yearly). */
export const EVERY_MAX_MS = 366 * 86_400_000;

/**
 * The cron calendar over croner (the domain's CronCalendar port, schedule.ts): it parses five- and six-field expressions
 * (seconds first), the @hourly ... @yearly macros, names of months and
 * days, L, W and #, and computes occurrences in IANA zones. croner runs a
 * fixed-time job whose time a spring-forward skips at the first time after
 * the gap, and an interval job at both occurrences of a repeated time;
 * ojs-cron 5.2 wants neither, so occurrences are filtered here: one whose
 * wall-clock time the expression does not match (a shifted one) and one
 * whose wall-clock time already occurred (the second pass of a repeated
 * hour) are passed over.
 * It also takes the interval expression `@every <duration>` (ojs-cron
 * 4.1, parsed here, since croner has none): ticks every duration from an
 * anchor, whatever the zone.
 */
export class CronerCalendar {
  private readonly crons = new Map<string, Cron>();
  private readonly formats = new Map<string, Intl.DateTimeFormat>();

  problem(expression: string, timezone: string): CalendarProblem | undefined {
    const zoneProblem = timezoneProblem(timezone);
    if (zoneProblem !== undefined) return { field: 'timezone', description: zoneProblem };
    const every = everyOf(expression);
    if (every !== undefined) return 'problem' in every ? { field: 'cron', description: every.problem } : undefined;
    try {
      this.cron(expression, timezone);
      return undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : 'is not a cron expression';
      return { field: 'cron', description: `is not a valid cron expression: ${message}` };
    }
  }

  /** Occurrences of an interval expression are `anchor` + k·interval, k ≥ 1; other expressions ignore the anchor. */
  nextAfter(expression: string, timezone: string, after: number, anchor: number): number | undefined {
    const intervalMs = this.intervalMs(expression);
    if (intervalMs !== undefined) return anchor + Math.max(1, Math.floor((after - anchor) / intervalMs) + 1) * intervalMs;
    const cron = this.cron(expression, timezone);
    let from = after;
    // Each pass-over moves past one occurrence; a handful at most per transition.
    for (let i = 0; i < 16; i++) {
      const next = cron.nextRun(new Date(from))?.getTime();
      if (next === undefined) return undefined;
      if (cron.match(new Date(next)) && !this.isRepeatedWallTime(timezone, next)) return next;
      from = next;
    }
    return undefined;
  }

  /** The interval of a valid interval expression (@every), in milliseconds; undefined for any other. */
  intervalMs(expression: string): number | undefined {
    const every = everyOf(expression);
    return every !== undefined && 'intervalMs' in every ? every.intervalMs : undefined;
  }

  /** Whether the wall-clock time at `at` already occurred earlier (a fall-back repeats it). */
  private isRepeatedWallTime(timezone: string, at: number): boolean {
    const shift = this.offsetMs(timezone, at - TRANSITION_LOOKBACK_MS) - this.offsetMs(timezone, at);
    return shift > 0 && this.offsetMs(timezone, at - shift) - this.offsetMs(timezone, at) === shift;
  }

  /** The zone's offset from UTC at `at`, in milliseconds (whole seconds). */
  private offsetMs(timezone: string, at: number): number {
    let format = this.formats.get(timezone);
    if (format === undefined) {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      this.formats.set(timezone, format);
    }
    const parts = format.formatToParts(new Date(at));
    const part = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
    const wall = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
    return wall - Math.floor(at / 1_000) * 1_000;
  }

  private cron(expression: string, timezone: string): Cron {
    const key = `${timezone} ${expression}`;
    let cron = this.crons.get(key);
    if (cron === undefined) {
      cron = new Cron(expression, { timezone, paused: true, mode: '5-or-6-parts' });
      if (this.crons.size >= CACHE_MAX) this.crons.clear();
      this.crons.set(key, cron);
    }
    return cron;
  }
}

/** An interval expression's interval, or why it is refused; undefined for an expression that is not one. */
function everyOf(expression: string): { intervalMs: number } | { problem: string } | undefined {
  const match = EVERY.exec(expression);
  if (match === null) return undefined;
  const intervalMs = parseGoDuration(match[1] ?? '');
  if (intervalMs === undefined)
    return { problem: '@every takes a duration such as 30m, 1h30m or 45s: units h, m, s and ms, in whole milliseconds' };
  if (intervalMs < EVERY_MIN_MS)
    return { problem: '@every must be at least 1s: schedules are evaluated at most once a second (ojs-cron 7.3)' };
  if (intervalMs > EVERY_MAX_MS) return { problem: '@every must be at most 366 days (8784h)' };
  return { intervalMs };
}

/**
 * ojs-cron 5.1: IANA names only, "UTC" or Area/Location; fixed offsets
 * ("+05:00", "UTC+5", Etc/GMT+5) and abbreviations ("EST") are refused even
 * where the runtime knows them.
 */
function timezoneProblem(timezone: string): string | undefined {
  const isAreaLocation = /^[A-Za-z]+(\/[A-Za-z0-9_+-]+)+$/.test(timezone) && !timezone.startsWith('Etc/');
  if (timezone !== 'UTC' && !isAreaLocation)
    return 'must be an IANA zone name such as UTC or America/New_York, not an offset or abbreviation';
  try {
    // The runtime's IANA database refuses (RangeError) a name it does not know.
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone === '' ? 'is not a known zone' : undefined;
  } catch {
    return 'is not a zone of the IANA time zone database';
  }
}
