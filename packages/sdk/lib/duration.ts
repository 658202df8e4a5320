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
