import { Status } from 'nice-grpc';

/**
 * What `ojs` exits with, so that scripts can tell a mistake of theirs from a
 * missing job, a refusal and a server they could not reach (README.md,
 * "Command line", lists them).
 */
export const ExitCode = {
  ok: 0,
  /** Anything else: an internal error of the server, a broken reply. */
  failure: 1,
  /** The command line itself is wrong: an unknown flag, args that are not JSON... */
  usage: 2,
  /** The job, queue or worker does not exist (NOT_FOUND). */
  notFound: 3,
  /** The server refused: bad input, wrong state, no or wrong credentials, no permission. */
  refused: 4,
  /** The server could not be reached or did not answer in time. */
  unavailable: 5,
  /** `jobs wait`: the job finished, but was cancelled or discarded. */
  jobFailed: 6,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The exit code of a call that failed with each gRPC status: one table, so
 * that a status without an entry does not compile.
 */
const EXIT_CODE_BY_STATUS: Readonly<Record<Status, ExitCode>> = {
  [Status.OK]: ExitCode.ok,
  [Status.NOT_FOUND]: ExitCode.notFound,
  [Status.INVALID_ARGUMENT]: ExitCode.refused,
  [Status.FAILED_PRECONDITION]: ExitCode.refused,
  [Status.ALREADY_EXISTS]: ExitCode.refused,
  [Status.OUT_OF_RANGE]: ExitCode.refused,
  [Status.PERMISSION_DENIED]: ExitCode.refused,
  [Status.UNAUTHENTICATED]: ExitCode.refused,
  // A full queue or store passes: like an unreachable server, try again later.
  [Status.RESOURCE_EXHAUSTED]: ExitCode.unavailable,
  [Status.UNAVAILABLE]: ExitCode.unavailable,
  [Status.DEADLINE_EXCEEDED]: ExitCode.unavailable,
  [Status.CANCELLED]: ExitCode.failure,
  [Status.UNKNOWN]: ExitCode.failure,
  [Status.ABORTED]: ExitCode.failure,
  [Status.UNIMPLEMENTED]: ExitCode.failure,
  [Status.INTERNAL]: ExitCode.failure,
  [Status.DATA_LOSS]: ExitCode.failure,
};

/** The exit code of a call that failed with `status`. */
export function exitCodeOfStatus(status: Status): ExitCode {
  return EXIT_CODE_BY_STATUS[status];
}

/** A failure the CLI itself detects, with the code to exit with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line is wrong (exit code 2). */
export function usageError(message: string): CliError {
  return new CliError(message, ExitCode.usage);
}
