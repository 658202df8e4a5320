/** A Redis hash as scripts return it (HGETALL: field, value, field, value...). */
export type FlatHash = readonly string[];

export function fromFlatHash(flat: FlatHash): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
  return record;
}

/** Field/value pairs for HSET, leaving out fields whose value is undefined. */
export function toPairs(fields: Record<string, string | number | undefined>): string[] {
  const pairs: string[] = [];
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) pairs.push(field, String(value));
  return pairs;
}

export function optionalNumber(value: string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : Number(value);
}
