import {
  ERROR_TYPE_MAX_CHARS,
  HOSTNAME_MAX_CHARS,
  JOB_TYPE_MAX_CHARS,
  LABEL_MAX_CHARS,
  LEASE_TOKEN_MAX_CHARS,
  QUEUE_NAME_MAX_CHARS,
  WORKER_ID_MAX_CHARS,
} from './limits';

/**
 * The rules for the names and ids clients send. Each function says why a
 * value cannot be one, or returns undefined. Ids are keys of the stores and
 * are quoted in errors and logs, so they are printable ASCII: a client that
 * sends invalid UTF-8 gets U+FFFD from the decoder, and two different ids
 * must never collapse into one.
 */

const UUIDV7_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Visible ASCII: no spaces, no control characters, nothing the decoder may have replaced. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const JOB_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const QUEUE_PATTERN = /^[a-z0-9][a-z0-9.-]*$/;

/** Job ids are lowercase UUIDv7s (ojs-core 5.2): the server makes them, or a producer chooses one. */
export function jobIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'is required';
  return UUIDV7_PATTERN.test(id) ? undefined : 'must be a lowercase UUIDv7 (8-4-4-4-12 hex)';
}

export function workerIdProblem(id: string): string | undefined {
  return asciiIdProblem(id, WORKER_ID_MAX_CHARS);
}

export function leaseTokenProblem(token: string): string | undefined {
  return asciiIdProblem(token, LEASE_TOKEN_MAX_CHARS);
}

export function labelProblem(label: string): string | undefined {
  return asciiIdProblem(label, LABEL_MAX_CHARS);
}

/** Dot-separated segments, e.g. "email.send" (ojs-core 5.3). */
export function jobTypeProblem(type: string): string | undefined {
  if (type.length === 0) return 'is required';
  if (type.length > JOB_TYPE_MAX_CHARS) return `must be at most ${JOB_TYPE_MAX_CHARS} characters`;
  if (!JOB_TYPE_PATTERN.test(type)) return 'must be dot-separated segments matching [a-z][a-z0-9_]*, e.g. "email.send"';
  return undefined;
}

/** Why `queue` is not a valid queue name (ojs-core 5.1), or undefined. */
export function queueNameProblem(queue: string): string | undefined {
  if (queue.length === 0) return 'is required';
  if (queue.length > QUEUE_NAME_MAX_CHARS) return `must be at most ${QUEUE_NAME_MAX_CHARS} characters`;
  if (!QUEUE_PATTERN.test(queue)) return 'must match [a-z0-9][a-z0-9.-]* (lowercase letters, digits, "-" and ".")';
  return undefined;
}

/** Error types name a class of failure and are matched against non_retryable_errors. */
export function errorTypeProblem(type: string): string | undefined {
  if (type.length === 0) return 'is required';
  return displayTextProblem(type, ERROR_TYPE_MAX_CHARS);
}

/** Host names are shown to operators, never used as keys. */
export function hostnameProblem(hostname: string): string | undefined {
  return hostname.length === 0 ? undefined : displayTextProblem(hostname, HOSTNAME_MAX_CHARS);
}

function asciiIdProblem(id: string, maxChars: number): string | undefined {
  if (id.length === 0) return 'is required';
  if (id.length > maxChars) return `must be at most ${maxChars} characters`;
  return VISIBLE_ASCII.test(id) ? undefined : 'must be printable ASCII without spaces';
}

function displayTextProblem(text: string, maxChars: number): string | undefined {
  if (text.length > maxChars) return `must be at most ${maxChars} characters`;
  return hasControlCharacters(text) ? 'must not contain control characters' : undefined;
}

/** Whether `text` holds a C0 or C1 control character or DEL, which have no place in display text. */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
