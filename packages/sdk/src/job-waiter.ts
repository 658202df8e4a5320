import { Status } from 'nice-grpc';
import { jobFromWire, type Job } from './job';
import type { JobServiceClient } from '../gen/ojs/server/v1/job_service';
import { JobWaitTimeoutError } from './job-outcome';
import { hasStatus, retryWhileUnreachable } from './unreachable';

/** How `Producer.result()` waits. */
export interface ResultOptions {
  /**
   * Longest time to wait, in milliseconds; by default as long as it takes.
   * When it passes, the wait rejects with a JobWaitTimeoutError (the job
   * itself goes on).
   */
  timeoutMs?: number;
  /** Ends the wait: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** How the waiting calls are made: the producer's settings. */
export interface WaitSettings {
  /** How many times a call is tried again in a row while the server is unreachable. */
  retries: number;
  /** Longest one WaitForJob call waits on the server before it answers and is made again. */
  callWaitMs: number;
}

/** setTimeout's limit: a longer delay would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Waits until the job finishes (completed, cancelled or discarded) and
 * resolves with its envelope. Each WaitForJob call waits on the server, woken
 * by the job's terminal transition, for at most `callWaitMs` (or what is left
 * of the timeout); an answer with finished = false is asked again. A server
 * that is unreachable, or stops while a call waits (which cancels it), is
 * called again with backoff, as other producer calls are: a wait is a read,
 * so asking again is safe, and a job that finished meanwhile is answered at
 * once.
 */
export async function waitUntilFinished(
  client: JobServiceClient,
  jobId: string,
  options: ResultOptions,
  settings: WaitSettings,
): Promise<Job> {
  const { timeoutMs, signal: callerSignal } = options;
  if (timeoutMs !== undefined && !(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS))
    throw new RangeError(`timeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${timeoutMs}`);
  callerSignal?.throwIfAborted();
  const stop = new AbortController();
  const abort = (): void => stop.abort();
  callerSignal?.addEventListener('abort', abort, { once: true });
  const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
  const timer = timeoutMs === undefined ? undefined : setTimeout(abort, timeoutMs);
  let seen: Job | undefined;
  try {
    for (;;) {
      const maxWaitMs = Math.max(1, Math.min(settings.callWaitMs, Math.ceil(deadline - performance.now())));
      const reply = await retryWhileUnreachable(
        () =>
          client.waitForJob(
            { jobId, maxWait: { seconds: Math.floor(maxWaitMs / 1_000), nanos: (maxWaitMs % 1_000) * 1e6 } },
            { signal: stop.signal },
          ),
        { retries: settings.retries, signal: stop.signal, isUnreachable: serverWentAway },
      );
      if (reply.job === undefined) throw new Error(`the server answered WaitForJob for job ${jobId} without the job`);
      seen = jobFromWire(reply.job);
      if (reply.finished) return seen;
    }
  } catch (error) {
    callerSignal?.throwIfAborted();
    if (stop.signal.aborted) throw new JobWaitTimeoutError(jobId, timeoutMs!, seen);
    throw error;
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', abort);
  }
}

/** The server is unreachable, or it stopped while the call waited (a server that shuts down cancels the calls it still holds). */
function serverWentAway(error: unknown): boolean {
  return hasStatus(error, Status.UNAVAILABLE) || hasStatus(error, Status.CANCELLED);
}
