import type { BulkResult } from '../../app/bulk-changes';
import { OjsError } from '../../domain/errors';
import type { LifecycleEvent } from '../../domain/event-catalog';
import type { Job, JobError } from '../../domain/job';
import { jobTimeline } from '../../domain/job-timeline';
import { desiredState } from '../../domain/worker';
import type { WorkflowView } from '../../domain/workflow-view';
import type { QueueCounts, QueueStats, WorkerSnapshot } from '../../store/job-store';
import type {
  ApiBulkResult,
  ApiEvent,
  ApiJob,
  ApiJobDetail,
  ApiJobError,
  ApiQueue,
  ApiQueueStats,
  ApiWorker,
  ApiWorkflow,
  ApiWorkflowStep,
} from './api-types';

/** Domain values as the dashboard's JSON (api-types.ts): the HTTP twin of the gRPC mappers. */

/** A queue's counts, pause and lag at `now`. */
export function toApiQueue({ queue, paused, oldestAvailableAt, limits, ...counts }: QueueCounts, now: number): ApiQueue {
  return {
    name: queue,
    paused,
    counts,
    ...(oldestAvailableAt === undefined ? {} : { lagMs: Math.max(0, now - oldestAvailableAt) }),
    ...(limits === undefined ? {} : { limits }),
  };
}

export function toApiQueueStats(stats: QueueStats, now: number): ApiQueueStats {
  return { queue: toApiQueue(stats.counts, now), minutes: stats.minutes, now };
}

export function toApiWorker({ worker, heldJobIds }: WorkerSnapshot): ApiWorker {
  return {
    workerId: worker.workerId,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: worker.queues,
    labels: worker.labels,
    concurrency: worker.concurrency,
    state: worker.state,
    desiredState: desiredState(worker),
    activeJobIds: heldJobIds,
    registeredAt: worker.registeredAt,
    lastBeatAt: worker.lastBeatAt,
  };
}

function toApiJobError(error: JobError): ApiJobError {
  return {
    type: error.type,
    message: error.message,
    backtrace: error.backtrace,
    attempt: error.attempt,
    occurredAt: error.occurredAt,
    ...(error.code === undefined ? {} : { code: error.code }),
  };
}

/** A job without its lease token: the dashboard shows who holds a job, never what would let it settle the job. */
export function toApiJob(job: Job): ApiJob {
  const { lease, error, errors, retry, ...rest } = job;
  return {
    id: rest.id,
    type: rest.type,
    queue: rest.queue,
    state: rest.state,
    args: rest.args,
    meta: rest.meta,
    priority: rest.priority,
    attempt: rest.attempt,
    maxAttempts: retry.maxAttempts,
    createdAt: rest.createdAt,
    timeoutMs: rest.timeoutMs,
    deadLetter: rest.deadLetter,
    errors: errors.map(toApiJobError),
    ...optional({
      enqueuedAt: rest.enqueuedAt,
      scheduledAt: rest.scheduledAt,
      startedAt: rest.startedAt,
      completedAt: rest.completedAt,
      nextRetryAt: rest.nextRetryAt,
      workerId: lease?.workerId,
      error: error === undefined ? undefined : toApiJobError(error),
      result: rest.result,
      progress: rest.progress,
      progressData: rest.progressData,
      lastCheckpoint: rest.lastCheckpoint,
    }),
  };
}

/** A job with its timeline, for its own page (listings leave the timeline out: nobody reads it there). */
export function toApiJobDetail(job: Job): ApiJobDetail {
  return {
    ...toApiJob(job),
    timeline: jobTimeline(job),
    ...optional({
      workflow: job.workflow === undefined ? undefined : { id: job.workflow.id, step: job.workflow.step },
      parentResults: job.parentResults,
    }),
  };
}

/** Most characters of a step's result the workflow page gets (api-types ApiWorkflowStep.resultExcerpt). */
export const RESULT_EXCERPT_CHARS = 200;

export function toApiWorkflow(view: WorkflowView): ApiWorkflow {
  return {
    id: view.id,
    type: view.type,
    name: view.name,
    state: view.state,
    createdAt: view.createdAt,
    jobCount: view.jobCount,
    completedCount: view.completedCount,
    failedCount: view.failedCount,
    ...optional({ startedAt: view.startedAt, completedAt: view.completedAt }),
    steps: view.steps.map(toApiWorkflowStep),
  };
}

function toApiWorkflowStep({ result, ...step }: WorkflowView['steps'][number]): ApiWorkflowStep {
  const text = result === undefined ? undefined : JSON.stringify(result);
  return {
    index: step.index,
    path: step.path,
    key: step.key,
    role: step.role,
    type: step.type,
    state: step.state,
    attempts: step.attempts,
    ...optional({
      cancelReason: step.cancelReason,
      jobId: step.jobId,
      startedAt: step.startedAt,
      completedAt: step.completedAt,
      resultExcerpt: text === undefined ? undefined : excerpt(text),
    }),
  };
}

/** The start of `text`, never cutting a character in two (a UTF-16 surrogate pair). */
function excerpt(text: string): string {
  if (text.length <= RESULT_EXCERPT_CHARS) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(RESULT_EXCERPT_CHARS - 1)) ? RESULT_EXCERPT_CHARS - 1 : RESULT_EXCERPT_CHARS;
  return `${text.slice(0, end)}…`;
}

export function toApiBulkResult(result: BulkResult): ApiBulkResult {
  return {
    matched: result.matched,
    succeeded: result.succeeded,
    failed: result.failed,
    items: result.items.map(({ jobId, outcome }) => {
      if (outcome.ok) return { jobId, ok: true };
      const error = outcome.error instanceof OjsError ? outcome.error : new OjsError('backend_error', 'internal error');
      return { jobId, ok: false, error: { code: error.code, message: error.message, retryable: error.retryable } };
    }),
  };
}

export function toApiEvent(event: LifecycleEvent): ApiEvent {
  return {
    id: event.id,
    type: event.type,
    time: event.time,
    subject: event.subject,
    data: event.data,
    ...optional({ queue: event.queue, jobType: event.jobType, jobId: event.jobId }),
  };
}

/** The fields of `values` that are set (JSON has no undefined). */
function optional<T extends Record<string, unknown>>(values: T): Partial<T> {
  // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the entries kept are entries of `values`
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
