import { ERROR_HISTORY_LIMIT, type HandlerCode, type JobError } from './job';
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

/** ojs-core section 8.1: at most 50 frames and 10,000 characters of backtrace. */
export const BACKTRACE_MAX_FRAMES = 50;
export const BACKTRACE_MAX_CHARS = 10_000;
const MESSAGE_MAX_CHARS = 10_000;

function capBacktrace(frames: readonly string[]): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (const frame of frames.slice(0, BACKTRACE_MAX_FRAMES)) {
    if (chars + frame.length > BACKTRACE_MAX_CHARS) {
      const room = BACKTRACE_MAX_CHARS - chars;
      if (room > 0) kept.push(frame.slice(0, room));
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
    message: report.message.slice(0, MESSAGE_MAX_CHARS),
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
