import type { JobEvent } from '../domain/job-event';
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
