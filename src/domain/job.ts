import type { JsonObject, JsonValue } from './json';
import type { RetryPolicy } from './retry-policy';

/** The 8 lifecycle states of ojs-core section 6. */
export const JOB_STATES = ['scheduled', 'available', 'pending', 'active', 'completed', 'retryable', 'cancelled', 'discarded'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** The states a job never leaves on its own (only RetryJob revives a discarded one). */
export const TERMINAL_STATES = ['completed', 'cancelled', 'discarded'] as const satisfies readonly JobState[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** Handler verdicts that override the retry policy (ojs-retry section 7). */
export type HandlerCode = 'retry' | 'discard' | 'dead_letter' | 'fail';

/** A structured failure of one attempt (ojs-core section 8). */
export interface JobError {
  type: string;
  message: string;
  backtrace: string[];
  code?: HandlerCode;
  details?: JsonObject;
  /** Attempt that produced the error. */
  attempt: number;
  /** Epoch milliseconds. */
  occurredAt: number;
}

/** The exclusive claim of one worker on one attempt of an active job. */
export interface Lease {
  workerId: string;
  /** Unique per attempt; Ack, Fail and extensions must present it. */
  token: string;
  /** Epoch milliseconds at which the lease lapses (see domain/timeouts leaseExpiry). */
  expiresAt: number;
  /** When the worker last showed it holds the job (claim, a beat listing it, progress). */
  renewedAt: number;
  /**
   * Whether the worker has shown it received the job (a beat listing it, an
   * extension). Until then the lease runs only for the confirmation window;
   * see {@link claimLease}.
   */
  isConfirmed: boolean;
}

/**
 * Job is the OJS envelope as the server keeps it. Times are epoch
 * milliseconds, durations are milliseconds. Defaults are resolved at
 * enqueue, so a stored job carries the values that apply to it.
 */
export interface Job {
  specversion: string;
  id: string;
  type: string;
  queue: string;
  args: JsonValue[];
  meta: JsonObject;
  priority: number;
  /** Execution timeout of one attempt (timeouts.md 5.1). */
  timeoutMs: number;
  /** Time from the soft timeout to the reclaim (timeouts.md 5.4). */
  gracePeriodMs: number;
  /** Longest silence about an active job before it is stalled (timeouts.md 5.5). */
  heartbeatTimeoutMs: number;
  /** Longest life from creation to completion (timeouts.md 5.2). */
  totalTimeoutMs?: number;
  /** Longest wait before the first attempt (timeouts.md 5.3). */
  enqueueTtlMs?: number;
  scheduledAt?: number;
  expiresAt?: number;
  retry: RetryPolicy;
  visibilityTimeoutMs: number;
  schema?: string;
  /** Deduplication (ojs-unique-jobs): the policy and the key computed from it at enqueue. */
  unique?: UniqueConstraint;

  state: JobState;
  attempt: number;
  createdAt: number;
  enqueuedAt?: number;
  startedAt?: number;
  completedAt?: number;
  error?: JobError;
  errors: JobError[];
  result?: JsonValue;
  nextRetryAt?: number;
  deadLetter: boolean;
  /** Present exactly while the job is active. */
  lease?: Lease;
  /** Progress of the current (or last) attempt, 0..1 (ojs-progress). */
  progress?: number;
  progressData?: JsonObject;
  /** The last checkpoint any attempt saved, for the next one to resume from. */
  lastCheckpoint?: JsonValue;
  /** The workflow this job is a step of (ojs-workflows); set at creation, never changed. */
  workflow?: WorkflowLink;
  /**
   * A workflow job's parent_results (ojs-workflows 7): the results of the
   * steps it depends on, set when it became available. Absent before, and
   * on jobs that depend on nothing (their parent_results is `{}`).
   */
  parentResults?: JsonObject;
}

/** Where a job stands in its workflow. */
export interface WorkflowLink {
  /** The workflow's id. */
  id: string;
  /** The job's node in the workflow's plan (domain workflow-plan.ts). */
  node: number;
  /** The node's display key: "1.0", "on_failure" (domain PlanNode.key). */
  step: string;
}

export { ERROR_HISTORY_LIMIT } from './limits';

/** The dimensions a uniqueness key may be made of (ojs-unique-jobs section 3). */
export const UNIQUE_DIMENSIONS = ['type', 'queue', 'args', 'meta'] as const;
export type UniqueDimension = (typeof UNIQUE_DIMENSIONS)[number];

/**
 * What happens to a job whose key an existing job holds (section 5).
 * replace_except_schedule is not offered: the contract refuses it as invalid.
 */
export const UNIQUE_CONFLICTS = ['reject', 'ignore', 'replace'] as const;
export type UniqueConflict = (typeof UNIQUE_CONFLICTS)[number];

/** A checked policy with its defaults applied. */
export interface UniquePolicy {
  keys: UniqueDimension[];
  /** With "args" in keys: the keys of the first argument that make the key; absent: all args. */
  argsKeys?: string[];
  /** With "meta" in keys: the meta keys that make the key. */
  metaKeys?: string[];
  /** ISO 8601 as given; absent: no time limit. */
  period?: string;
  periodMs?: number;
  states: JobState[];
  onConflict: UniqueConflict;
}

/** A job's uniqueness: its policy and the key computed from it. */
export interface UniqueConstraint {
  policy: UniquePolicy;
  /** Lowercase hex SHA-256 of the canonical JSON of the chosen dimensions (section 4). */
  key: string;
}
