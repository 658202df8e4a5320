const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses an operator-written duration: "250ms", "5s", "2m", "1h", "7d", or a bare
 * number of seconds (the unit the OJS specifications use). Undefined when
 * the text is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 's']!);
}

/** One term of a Go duration: a decimal number and its unit (ms, s, m or h). */
const GO_TERM = /(\d+)(?:\.(\d+))?(ms|s|m|h)/y;

/**
 * Parses a duration as Go's time.Duration writes it ("30m", "1h30m",
 * "2h45m30s", "1.5s"), in whole milliseconds: one or more terms, each a
 * decimal number and a unit of h, m, s or ms (the units of ojs-cron 4.1).
 * Undefined when the text is not such a duration, or is one that is not a
 * whole number of milliseconds (Go's us and ns are not taken). Exact: a
 * term's fraction is computed in integers.
 */
export function parseGoDuration(text: string): number | undefined {
  let totalMs = 0;
  GO_TERM.lastIndex = 0;
  while (GO_TERM.lastIndex < text.length) {
    const match = GO_TERM.exec(text);
    if (match === null) return undefined;
    const termMs = goTermMs(match[1]!, match[2] ?? '', UNIT_MS[match[3]!]!);
    if (termMs === undefined) return undefined;
    totalMs += termMs;
  }
  return text === '' ? undefined : totalMs;
}

/** A term's milliseconds; undefined when its fraction does not make whole milliseconds. */
function goTermMs(whole: string, fraction: string, unitMs: number): number | undefined {
  const digits = fraction.replace(/0+$/, '');
  // No unit (at most 3,600,000 ms, 2^7 * 5^5 * 9) turns more than 7 significant fraction digits into whole milliseconds.
  if (digits.length > 7) return undefined;
  const scale = 10 ** digits.length;
  const fractionScaled = Number(digits === '' ? '0' : digits) * unitMs;
  if (fractionScaled % scale !== 0) return undefined;
  return Number(whole) * unitMs + fractionScaled / scale;
}
