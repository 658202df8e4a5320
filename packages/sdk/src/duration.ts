import { parseDuration } from '../lib/duration';

/** A duration setting ("25s", "1500ms", "2m", or bare seconds); throws naming the setting when it is not one. */
export function durationSetting(text: string, setting: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`${setting} must be a duration such as "25s" or "1500ms", got "${text}"`);
  return ms;
}
