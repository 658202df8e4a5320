import type { BulkOperation, BulkResult } from '../../app/bulk-changes';
import type { LifecycleEvent } from '../../domain/event-catalog';
import type { QueueLimits } from '../../domain/queue-limits';
import { desiredState } from '../../domain/worker';
import type { QueueCounts, QueueStats, WorkerSnapshot, WorkerTarget } from '../../store/job-store';
import { invalidRequest, OjsError } from '../../domain/errors';
import type {
  BulkResult as ProtoBulkResult,
  GetQueueStatsResponse,
  JobEvent as ProtoJobEvent,
  QueueInfo,
  QueueLimits as ProtoQueueLimits,
  SetWorkerStateRequest,
  WorkerInfo,
} from '../../../gen/ojs/server/v1/operator_service';
import { JobState } from '../../../gen/ojs/server/v1/job';
import { toProtoJobState, toProtoWorkerState } from './enum-mapping';
import { toPageToken } from './page-token';
import { fromDuration, toDate, toDuration } from './time-mapping';

/** A lifecycle event on the wire (ojs-events section 2); job fields stay empty for worker and queue events. */
export function toProtoEvent(event: LifecycleEvent): ProtoJobEvent {
  const attempt = event.data['attempt'];
  const workerId = event.data['worker_id'];
  return {
    specversion: '1.0',
    id: event.id,
    type: event.type,
    source: event.source,
    time: toDate(event.time),
    subject: event.subject,
    jobId: event.jobId ?? '',
    jobType: event.jobType ?? '',
    queue: event.queue ?? '',
    attempt: typeof attempt === 'number' ? attempt : 0,
    workerId: typeof workerId === 'string' ? workerId : '',
    data: event.data,
  };
}

/** A queue's counts, pause, limits and lag (how long its oldest available job has waited at `now`). */
export function toQueueInfo({ queue, paused, oldestAvailableAt, limits, ...counts }: QueueCounts, now: number): QueueInfo {
  return {
    name: queue,
    ...counts,
    paused,
    lag: oldestAvailableAt === undefined ? undefined : toDuration(Math.max(0, now - oldestAvailableAt)),
    oldestAvailableAt: toDate(oldestAvailableAt),
    limits: limits === undefined ? undefined : toProtoQueueLimits(limits),
  };
}

function toProtoQueueLimits({ maxActive, rate }: QueueLimits): ProtoQueueLimits {
  return { maxActive, rate: rate === undefined ? undefined : { limit: rate.limit, period: toDuration(rate.periodMs) } };
}

/** A request's limits; an unset rate period is 0 ms, for the domain to refuse. */
export function fromProtoQueueLimits(limits: ProtoQueueLimits | undefined): QueueLimits | undefined {
  if (limits === undefined) return undefined;
  const { maxActive, rate } = limits;
  return {
    ...(maxActive === undefined ? {} : { maxActive }),
    ...(rate === undefined ? {} : { rate: { limit: rate.limit, periodMs: fromDuration(rate.period) ?? 0 } }),
  };
}

export function toQueueStats(stats: QueueStats, now: number): GetQueueStatsResponse {
  return {
    queue: toQueueInfo(stats.counts, now),
    minutes: stats.minutes.map(({ minute, ...counts }) => ({ minute: toDate(minute), ...counts })),
  };
}

/**
 * The state of a job an operation succeeded on without changing it: a
 * cancelled job cancelled again stays cancelled; a deleted job has none.
 */
const UNCHANGED_STATE: Readonly<Record<BulkOperation, JobState>> = {
  cancel: JobState.JOB_STATE_CANCELLED,
  retry: JobState.JOB_STATE_UNSPECIFIED,
  delete: JobState.JOB_STATE_UNSPECIFIED,
};

/** What a bulk operation did, item by item. */
export function toProtoBulkResult(result: BulkResult, operation: BulkOperation): ProtoBulkResult {
  return {
    items: result.items.map(({ jobId, outcome }) => {
      if (outcome.ok)
        return {
          jobId,
          ok: true,
          errorCode: '',
          errorMessage: '',
          state: outcome.transition === undefined ? UNCHANGED_STATE[operation] : toProtoJobState(outcome.transition.to),
        };
      const error = outcome.error instanceof OjsError ? outcome.error : new OjsError('backend_error', 'internal error');
      return { jobId, ok: false, errorCode: error.code, errorMessage: error.message, state: JobState.JOB_STATE_UNSPECIFIED };
    }),
    matched: result.matched,
    succeeded: result.succeeded,
    failed: result.failed,
    nextPageToken: toPageToken(result.nextAfter),
  };
}

export function toTarget(target: SetWorkerStateRequest['target']): WorkerTarget {
  const value = target?.value ?? '';
  if (target === undefined || value === '') throw invalidRequest('target', 'set one of worker_id, label or queue');
  switch (target.$case) {
    case 'workerId':
      return { workerId: value };
    case 'label':
      return { label: value };
    case 'queue':
      return { queue: value };
  }
}

export function toWorkerInfo({ worker, heldJobIds }: WorkerSnapshot): WorkerInfo {
  return {
    workerId: worker.workerId,
    hostname: worker.hostname,
    pid: worker.pid,
    queues: worker.queues,
    concurrency: worker.concurrency,
    labels: worker.labels,
    startedAt: toDate(worker.startedAt),
    registeredAt: toDate(worker.registeredAt),
    state: toProtoWorkerState(worker.state),
    desiredState: toProtoWorkerState(desiredState(worker)),
    lastBeatAt: toDate(worker.lastBeatAt),
    activeJobs: heldJobIds.length,
    activeJobIds: heldJobIds,
  };
}
