import { assertField, invalidRequest } from '../domain/errors';
import { queueNameProblem } from '../domain/identifiers';
import { JOB_EVENT_TYPES, type JobEvent } from '../domain/job-event';
import { MAX_QUEUES_PER_WORKER } from '../domain/limits';
import type { JobStore } from '../store/job-store';

export interface EventFilter {
  /** Event types to pass; empty passes all. */
  types: readonly string[];
  /** Queues whose events pass; empty passes all. */
  queues: readonly string[];
}

/** The job events of every replica, fanned out to this replica's WatchEvents streams. */
export class EventFeed {
  private readonly listeners = new Set<(event: JobEvent) => void>();
  private readonly unsubscribe: () => void;

  constructor(store: JobStore) {
    this.unsubscribe = store.subscribe((signal) => {
      if (signal.kind !== 'event') return;
      for (const listener of this.listeners) listener(signal.event);
    });
  }

  /** Calls `listener` with every event `filter` passes; returns the unsubscribe. */
  watch(filter: EventFilter, listener: (event: JobEvent) => void): () => void {
    assertEventFilter(filter);
    const passes = (event: JobEvent): boolean =>
      (filter.types.length === 0 || filter.types.includes(event.type)) &&
      (filter.queues.length === 0 || filter.queues.includes(event.queue));
    const filtered = (event: JobEvent): void => {
      if (passes(event)) listener(event);
    };
    this.listeners.add(filtered);
    return () => this.listeners.delete(filtered);
  }

  stop(): void {
    this.unsubscribe();
    this.listeners.clear();
  }
}

/** Known event types, and at most as many valid queue names as a worker may consume. */
function assertEventFilter(filter: EventFilter): void {
  const known: readonly string[] = JOB_EVENT_TYPES;
  if (filter.types.length > known.length) throw invalidRequest('types', `must list at most ${known.length} event types`);
  filter.types.forEach((type, i) => {
    if (!known.includes(type)) throw invalidRequest(`types[${i}]`, `must be one of ${JOB_EVENT_TYPES.join(', ')}`);
  });
  if (filter.queues.length > MAX_QUEUES_PER_WORKER) throw invalidRequest('queues', `must list at most ${MAX_QUEUES_PER_WORKER} queues`);
  filter.queues.forEach((queue, i) => assertField(`queues[${i}]`, queueNameProblem(queue)));
}
