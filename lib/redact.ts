/** What stands in for a removed secret. */
export const REDACTED = '***';

/**
 * The user-information part of a URL in free text: a scheme, `//`, then
 * `user:password@` or `:password@`. The password runs from the first colon to
 * the last `@` of the token (greedy, so a raw `@` or `/` in a password leaves
 * no piece of it behind; whitespace and quotes end a token). A user name
 * alone (no colon) is not a secret and matches nothing.
 */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s"'<>/:@]*):[^\s"'<>]*@/gi;

/**
 * Text with the password of every URL in it replaced by `***`, keeping the
 * scheme, user name, host and port, which are what an operator needs to
 * recognise a connection: `rediss://app:hunter2@cache:6380` becomes
 * `rediss://app:***@cache:6380`. For anything that may reach a log, an error
 * or telemetry: a configured URL itself, or an error message built from one.
 * Generic (not only Redis): the same holds for any URL with credentials.
 */
export function redactUrlPasswords(text: string): string {
  return text.replace(URL_PASSWORD, `$1:${REDACTED}@`);
}

/**
 * An error's message and stack with URL passwords redacted, as one string
 * for a last-resort report (the process is exiting); other properties of the
 * error (which util.inspect would print too, such as the `input` of an
 * invalid URL) are left out on purpose.
 */
export function redactedErrorReport(error: unknown): string {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return redactUrlPasswords(text);
}

/**
 * A logger's serialized error (pino's `err`) with URL passwords redacted from
 * its message and stack, for a log serializer that covers every logged error
 * whatever code logged it.
 */
export function redactSerializedError<T extends { message: string; stack: string }>(serialized: T): T {
  return { ...serialized, message: redactUrlPasswords(serialized.message), stack: redactUrlPasswords(serialized.stack) };
}
