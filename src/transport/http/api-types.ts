/**
 * The JSON the dashboard's HTTP API answers, shared by the server
 * (api-mapping.ts) and the browser (web/): one definition of the wire
 * shape. It imports nothing, so that the browser bundle can use it. Times
 * are epoch milliseconds, durations milliseconds.
 */

export const API_JOB_STATES = ['scheduled', 'available', 'pending', 'active', 'completed', 'retryable', 'cancelled', 'discarded'] as const;
export type ApiJobState = (typeof API_JOB_STATES)[number];

export type ApiWorkerState = 'running' | 'quiet' | 'terminate';

/** Who the dashboard is talking to, and what its rules let it do (the buttons it shows). */
export interface ApiSession {
  /** The principal's name ('' when authentication is off). */
  principal: string;
  isAuthRequired: boolean;
  may: {
    pauseQueues: boolean;
    steerWorkers: boolean;
    retryJobs: boolean;
    deleteJobs: boolean;
    cancelJobs: boolean;
    cancelWorkflows: boolean;
  };
}

/** One page of a listing; `next` continues it. `now` is the server's clock when it answered, for ages and lags. */
export interface ApiPage<T> {
  items: T[];
  next?: string;
  now: number;
}

export interface ApiQueue {
  name: string;
  paused: boolean;
  counts: Record<ApiJobState, number>;
  /** How long the job that runs next has waited; absent when none is available. */
  lagMs?: number;
  /** Its fleet-wide limits (SetQueueLimits); absent when it has none. */
  limits?: { maxActive?: number; rate?: { limit: number; periodMs: number } };
}

export interface ApiMinute {
  minute: number;
  completed: number;
  failed: number;
  discarded: number;
}

export interface ApiQueueStats {
  queue: ApiQueue;
  /** The last 60 minutes, oldest first. */
  minutes: ApiMinute[];
  now: number;
}

export interface ApiWorker {
  workerId: string;
  hostname: string;
  pid: number;
  queues: string[];
  labels: string[];
  concurrency: number;
  state: ApiWorkerState;
  desiredState: ApiWorkerState;
  activeJobIds: string[];
  registeredAt: number;
  lastBeatAt: number;
}

export interface ApiJobError {
  type: string;
  message: string;
  backtrace: string[];
  attempt: number;
  occurredAt: number;
  code?: string;
}

/** A job's envelope and state, without its lease token (which would let a reader settle the job). */
export interface ApiJob {
  id: string;
  type: string;
  queue: string;
  state: ApiJobState;
  args: unknown[];
  meta: Record<string, unknown>;
  priority: number;
  attempt: number;
  maxAttempts: number;
  createdAt: number;
  enqueuedAt?: number;
  scheduledAt?: number;
  startedAt?: number;
  completedAt?: number;
  nextRetryAt?: number;
  timeoutMs: number;
  deadLetter: boolean;
  workerId?: string;
  error?: ApiJobError;
  errors: ApiJobError[];
  result?: unknown;
  /** 0..1 */
  progress?: number;
  progressData?: Record<string, unknown>;
  lastCheckpoint?: unknown;
}

/** One moment of a job's past (domain job-timeline.ts: derived from the envelope, so it outlives the event log). */
export interface ApiTimelineEntry {
  kind: 'created' | 'scheduled' | 'enqueued' | 'started' | 'failed' | 'retry_due' | 'completed' | 'cancelled' | 'discarded';
  at: number;
  attempt?: number;
  dueAt?: number;
  errorType?: string;
  errorMessage?: string;
  isDeadLetter?: boolean;
}

/**
 * A job as its own page shows it: the envelope and its timeline, oldest
 * first; for a workflow's job, where it stands in its workflow and the
 * results of the steps it depends on (absent before it became available).
 */
export interface ApiJobDetail extends ApiJob {
  timeline: ApiTimelineEntry[];
  /** The workflow's id and the job's step key ("1.0", "on_failure"). */
  workflow?: { id: string; step: string };
  parentResults?: Record<string, unknown>;
}

export type ApiWorkflowState = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';
export type ApiStepState = 'waiting' | 'pending' | 'active' | 'completed' | 'failed' | 'cancelled';

/** A workflow's job (ojs-workflows 11.2), in definition order. */
export interface ApiWorkflowStep {
  index: number;
  /** Where it sits in the definition ("steps[1].jobs[0]") and its display key ("1.0"). */
  path: string;
  key: string;
  role: 'step' | 'job' | 'on_complete' | 'on_success' | 'on_failure';
  type: string;
  state: ApiStepState;
  cancelReason?: 'not_triggered' | 'upstream_failed' | 'workflow_cancelled';
  jobId?: string;
  attempts: number;
  startedAt?: number;
  completedAt?: number;
  /**
   * The start of its result's JSON text (at most RESULT_EXCERPT_CHARS
   * characters, then "…"): a workflow has up to 1,000 jobs, each result up
   * to a mebibyte; the whole result is on the job's page.
   */
  resultExcerpt?: string;
}

export interface ApiWorkflow {
  id: string;
  type: 'chain' | 'group' | 'batch';
  name: string;
  state: ApiWorkflowState;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  jobCount: number;
  completedCount: number;
  failedCount: number;
  steps: ApiWorkflowStep[];
}

export interface ApiBulkResult {
  matched: number;
  succeeded: number;
  failed: number;
  items: { jobId: string; ok: boolean; error?: ApiErrorBody['error'] }[];
}

export interface ApiWorkerDirection {
  /** The workers directed (at most 1,000 named), and how many in all. */
  workerIds: string[];
  directed: number;
}

/** A lifecycle event, as the event stream (text/event-stream, `data:` lines) sends it. */
export interface ApiEvent {
  id: string;
  type: string;
  time: number;
  subject: string;
  queue?: string;
  jobType?: string;
  jobId?: string;
  data: Record<string, unknown>;
}

/** Every refusal: the OJS error code, a message, and whether trying again may succeed. */
export interface ApiErrorBody {
  error: { code: string; message: string; retryable: boolean };
}
