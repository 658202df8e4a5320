import { assertField, invalidRequest, jobNotFound } from '../domain/errors';
import { jobIdProblem } from '../domain/identifiers';
import type { Job } from '../domain/job';
import { isTerminal } from '../domain/job-state-machine';
import type { Principal } from '../domain/principal';
import type { AppContext } from './app-context';
import { visibleJob } from './caller-scope';

/** How long WaitForJob waits when the caller does not say, and at most. */
export const DEFAULT_RESULT_WAIT_MS = 30_000;
export const MAX_RESULT_WAIT_MS = 3_600_000;

/**
 * Waiting for a job to finish (ojs-results 8.2): woken by the job's own
 * terminal fact in the store's log, whichever replica recorded it, never by
 * polling. With the event log off (retention count 0) a waiter only looks
 * again when its wait ends.
 */
export class JobResults {
  /** Ends each wait in progress, for a stopping server: waiters answer at once rather than hold the shutdown. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly ctx: AppContext) {}

  /** Ends every wait in progress: each answers with the job as it is (a stopping replica must not hold its calls). */
  endAll(): void {
    for (const end of this.waiting) end();
  }

  /** The job once it finishes, or as it is when `maxWaitMs` (0: the default) or `signal` ends the wait. */
  async wait(caller: Principal, jobId: string, maxWaitMs: number, signal: AbortSignal): Promise<{ job: Job; finished: boolean }> {
    assertField('job_id', jobIdProblem(jobId));
    if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_RESULT_WAIT_MS) {
      throw invalidRequest('max_wait', `must be from 0 (meaning ${DEFAULT_RESULT_WAIT_MS / 1000} s) to ${MAX_RESULT_WAIT_MS / 1000} s`);
    }
    const { store } = this.ctx;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // Follow first, then read: a job that finishes after the read is seen in the log.
    const stopFollowing = await store.followFacts(undefined, (facts) => {
      if (facts.some(({ fact }) => fact.kind === 'job' && fact.jobId === jobId && isTerminal(fact.to))) finish();
    });
    let timer: NodeJS.Timeout | undefined;
    let endWait: (() => void) | undefined;
    try {
      // A job of a queue the caller may not use is NOT_FOUND to it, as a job that does not exist is.
      const job = visibleJob(caller, jobId, await store.getJob(jobId));
      if (isTerminal(job.state)) return { job, finished: true };
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs === 0 ? DEFAULT_RESULT_WAIT_MS : maxWaitMs);
        signal.addEventListener('abort', () => resolve(), { once: true });
        endWait = resolve;
        this.waiting.add(resolve);
      });
      await Promise.race([finished, waited]);
      const current = await store.getJob(jobId);
      if (current === undefined) throw jobNotFound(jobId);
      return { job: current, finished: isTerminal(current.state) };
    } finally {
      clearTimeout(timer);
      if (endWait !== undefined) this.waiting.delete(endWait);
      stopFollowing();
    }
  }
}
