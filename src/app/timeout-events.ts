import type { Job, JobError } from '../domain/job';
import { timeoutEvent } from '../domain/job-event';
import type { JobTransition } from '../domain/transition';
import type { AppContext } from './app-context';

/** An error the server recorded on a job, with the worker that held it. */
export interface RecordedError {
  job: Job;
  error: JobError;
  workerId?: string;
}

/**
 * Emits the timeout events (timeouts.md 11.1) of errors that were actually
 * recorded: once, by the replica that made the change, as telemetry and on
 * the store's channel for every replica's WatchEvents streams.
 */
export class TimeoutEvents {
  constructor(private readonly ctx: AppContext) {}

  /** Emits the events of `recorded` whose job made one of `applied`. */
  async emit(recorded: readonly RecordedError[], applied: readonly JobTransition[]): Promise<void> {
    if (recorded.length === 0 || applied.length === 0) return;
    const appliedIds = new Set(applied.map((t) => t.jobId));
    for (const { job, error, workerId } of recorded) {
      if (!appliedIds.has(job.id)) continue;
      const event = timeoutEvent(job, error, workerId);
      if (event === undefined) continue;
      this.ctx.telemetry.jobEvent(event);
      this.ctx.logger.info({ event }, event.type);
      try {
        await this.ctx.store.publish({ kind: 'event', event });
      } catch (publishError) {
        // The change is made; a watcher missing the event is the lesser harm than failing the call.
        this.ctx.logger.warn({ err: publishError, event }, 'could not publish a job event');
      }
    }
  }
}
