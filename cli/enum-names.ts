/**
 * The name an operator reads and types for an enum value: its proto name
 * without the enum's prefix, lower-cased (JOB_STATE_DISCARDED -> "discarded"),
 * as the OJS JSON wire format writes states. Unknown numbers stay numbers.
 */
export function enumName(values: Record<number, string>, prefix: string, value: number): string {
  const name = values[value];
  return name?.startsWith(prefix) === true ? name.slice(prefix.length).toLowerCase() : String(value);
}

/** The members of a generated enum by the names enumName gives them, UNSPECIFIED and UNRECOGNIZED left out. */
export function enumMembersByName<E extends number>(values: Record<string, string | E>, prefix: string): ReadonlyMap<string, E> {
  return new Map(
    Object.entries(values)
      .filter(
        (entry): entry is [string, E] => typeof entry[1] === 'number' && entry[0].startsWith(prefix) && !entry[0].endsWith('_UNSPECIFIED'),
      )
      .map(([key, value]) => [key.slice(prefix.length).toLowerCase(), value]),
  );
}
