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
  may: { pauseQueues: boolean; steerWorkers: boolean; retryJobs: boolean; deleteJobs: boolean; cancelJobs: boolean };
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

/** A job as its own page shows it: the envelope and its timeline, oldest first. */
export interface ApiJobDetail extends ApiJob {
  timeline: ApiTimelineEntry[];
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
