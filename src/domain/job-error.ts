import type { HandlerCode, JobError } from './job';
import { BACKTRACE_MAX_CHARS, BACKTRACE_MAX_FRAMES, ERROR_HISTORY_LIMIT, ERROR_MESSAGE_MAX_CHARS } from './limits';
import type { JsonObject } from './json';

/** Error types the server itself records (worker-protocol appendix B and others). */
export const SERVER_ERROR_TYPES = {
  visibilityTimeout: 'visibility_timeout',
  workerDeath: 'worker_death',
  shutdown: 'shutdown',
  expired: 'expired',
} as const;

/** A failure as reported by a worker or produced by the server, before it is stamped. */
export interface FailureReport {
  type: string;
  message: string;
  backtrace?: string[];
  code?: HandlerCode;
  details?: JsonObject;
}

/** What a job that reached its expires_at before starting records. */
export const EXPIRY_REPORT: Readonly<FailureReport> = Object.freeze({
  type: SERVER_ERROR_TYPES.expired,
  message: 'expires_at passed before the job could start',
});

export { BACKTRACE_MAX_CHARS, BACKTRACE_MAX_FRAMES };

/** The first `maxChars` UTF-16 units of `text`, never ending in half a surrogate pair. */
function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const last = text.charCodeAt(maxChars - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars);
}

function capBacktrace(frames: readonly string[]): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (const frame of frames.slice(0, BACKTRACE_MAX_FRAMES)) {
    if (chars + frame.length > BACKTRACE_MAX_CHARS) {
      const room = BACKTRACE_MAX_CHARS - chars;
      if (room > 0) kept.push(truncate(frame, room));
      break;
    }
    kept.push(frame);
    chars += frame.length;
  }
  return kept;
}

/** Stamps a report with its attempt and time, and trims it to the stored limits. */
export function stampError(report: FailureReport, attempt: number, now: number): JobError {
  const error: JobError = {
    type: report.type,
    message: truncate(report.message, ERROR_MESSAGE_MAX_CHARS),
    backtrace: capBacktrace(report.backtrace ?? []),
    attempt,
    occurredAt: now,
  };
  if (report.code !== undefined) error.code = report.code;
  if (report.details !== undefined) error.details = report.details;
  return error;
}

/** The history with `error` appended, keeping the most recent {@link ERROR_HISTORY_LIMIT}. */
export function appendError(history: readonly JobError[], error: JobError): JobError[] {
  const next = [...history, error];
  return next.length > ERROR_HISTORY_LIMIT ? next.slice(next.length - ERROR_HISTORY_LIMIT) : next;
}
