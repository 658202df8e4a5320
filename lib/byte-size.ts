const UNIT_BYTES: Record<string, number> = { b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/**
 * Parses an operator-written size: "512MiB", "64KiB", "1GiB", "1.5GiB",
 * "100B", or a bare number of bytes. Units are the binary ones (KiB = 1024
 * bytes), in any letter case; decimal units (KB, MB) are refused rather than
 * guessed at. Undefined when the text is not a size or the number of bytes
 * is not exact in a double.
 */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([a-z]+)?$/i.exec(text.trim());
  if (match === null) return undefined;
  const unit = UNIT_BYTES[(match[2] ?? 'b').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
