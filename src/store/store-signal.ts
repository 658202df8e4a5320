import type { WorkerState } from '../domain/worker';

/**
 * What a store tells the server replicas about changes that open streams
 * must react to. A shared store delivers every signal to every replica, so a
 * job enqueued through one replica wakes a Fetch stream held by another.
 */
export type StoreSignal =
  /** `count` jobs became available in `queue`. */
  | { kind: 'jobsAvailable'; queue: string; count: number }
  /** The worker holds `count` fewer jobs: it may take more. */
  | { kind: 'capacityFreed'; workerId: string; count: number }
  /** The state the worker is directed to changed. */
  | { kind: 'workerDirected'; workerId: string; state: WorkerState }
  /** Jobs the worker holds were cancelled. */
  | { kind: 'jobsCancelled'; workerId: string; jobIds: string[] }
  /** The worker was deregistered or declared dead. */
  | { kind: 'workerRemoved'; workerId: string }
  /**
   * A scheduled or retryable job now falls due at `at`, before every other
   * one waiting for its time: the next promotion pass is due then.
   */
  | { kind: 'dueAt'; at: number }
  /** A cron schedule's next tick is now at `at`, before every other schedule's: the next schedule pass is due then. */
  | { kind: 'scheduleDueAt'; at: number }
  | PublishedSignal
  /**
   * The backend became unreachable or reachable again. Signals may have been
   * lost while it was away, so waiting streams should look again.
   */
  | { kind: 'availability'; isAvailable: boolean };

/** Signals the application originates and a store only carries to every replica. */
export type PublishedSignal =
  /** The execution (or total) timeout of jobs the worker holds passed: tell it to stop them. */
  | { kind: 'jobsTimedOut'; workerId: string; jobIds: string[] }
  /** Jobs the worker held were taken back from it: tell it to stop them and answer nothing. */
  | { kind: 'jobsReclaimed'; workerId: string; jobIds: string[] };
