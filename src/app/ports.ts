import type { JobState } from '../domain/job';
import type { JobTransition, WorkerTransition } from '../domain/transition';
import type { WorkflowPlan } from '../domain/workflow-plan';

/** Structured logger (pino's calling convention: context object, then message). */
export interface Logger {
  debug(context: object, message: string): void;
  info(context: object, message: string): void;
  warn(context: object, message: string): void;
  error(context: object, message: string): void;
}

/** How long ago active jobs of a queue last showed signs of life. */
export interface HeartbeatAge {
  queue: string;
  /** The oldest among the queue's active jobs. */
  ageMs: number;
}

/** How many jobs of a queue are in each state, as the queue gauges report them. */
export type QueueJobCounts = { queue: string } & Record<JobState, number>;

/**
 * Where the server's observations go. The OpenTelemetry implementation
 * makes a span per transition, in the job's trace, carrying the lifecycle
 * events it stands for (ojs-events 3, derived by the domain's event
 * catalog), and keeps the metrics of ojs-events 7 and timeouts.md 11.2.
 */
export interface Telemetry {
  /**
   * Job state changes this replica made (each replica reports its own, so
   * counters sum across replicas). Read only when something is exported:
   * a caller may hand them over unbuilt (settlement's, decoded as read).
   */
  jobTransitions(transitions: Iterable<JobTransition>): void;
  workerTransition(transition: WorkerTransition): void;
  /**
   * A workflow was created: its span (ojs.workflow, a child of the
   * producer's `traceparent` when given). Returns the traceparent its jobs
   * carry so that the workflow is one trace; undefined when there is no
   * trace to join (tracing off and no producer context).
   */
  workflowCreated(plan: WorkflowPlan, traceparent?: string): string | undefined;
  /** Where the heartbeat-age gauge reads from when metrics are collected. */
  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void;
  /**
   * Where the queue gauges read the jobs of each queue per state from when
   * metrics are collected; `read` should bound its own cost (it runs on
   * every collection).
   */
  observeQueueCounts(read: () => Promise<QueueJobCounts[]>): void;
}

/** Sources of identity and chance, injected so tests can pin them. */
export interface Entropy {
  /** A new UUIDv7 job id. */
  newJobId(): string;
  /** A unique, unguessable nonce for one claim's lease tokens. */
  newLeaseNonce(): string;
  /** Uniform in [0, 1), for retry jitter. */
  random(): number;
}
