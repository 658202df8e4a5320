import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import { invalidRequest } from '../../domain/errors';
import type { JobEvent } from '../../domain/job-event';
import { queueNameProblem, workerIdProblem } from '../../domain/identifiers';
import { MAX_PAGE_SIZE, pageRequest } from '../../domain/paging';
import type { WorkerFilter, WorkerTarget, WorkerSnapshot } from '../../store/job-store';
import type {
  ListQueuesRequest,
  ListWorkersRequest,
  JobEvent as ProtoJobEvent,
  OperatorServiceImplementation,
  SetWorkerStateRequest,
  WatchEventsRequest,
  WatchEventsResponse,
  WorkerInfo,
} from '../../../gen/ojs/server/v1/operator_service';
import { desiredState } from '../../domain/worker';
import { AsyncQueue } from '../../../lib/async-queue';
import { fromProtoWorkerState, toProtoWorkerState } from './enum-mapping';
import { shuttingDown } from './shutting-down';
import { toDate } from './time-mapping';

/** OperatorService handlers: the fleet, the queues and the event feed. */
export class OperatorServiceHandlers implements OperatorServiceImplementation {
  private readonly eventStreams = new Set<AsyncQueue<WatchEventsResponse>>();

  constructor(private readonly app: Application) {}

  /** Ends every open WatchEvents stream with UNAVAILABLE (server shutdown). */
  endStreams(): void {
    for (const outbox of this.eventStreams) outbox.fail(shuttingDown());
  }

  async listWorkers(request: ListWorkersRequest) {
    const filter: WorkerFilter = {};
    if (request.label !== '') filter.label = request.label;
    if (request.queue !== '') filter.queue = request.queue;
    const page = await this.app.workers.list(filter, pageRequest(request.pageSize, request.pageToken, workerIdProblem));
    return { workers: page.items.map(toWorkerInfo), nextPageToken: page.nextAfter ?? '' };
  }

  async setWorkerState(request: SetWorkerStateRequest) {
    const state = fromProtoWorkerState(request.state);
    if (state === undefined) throw invalidRequest('state', 'must be RUNNING, QUIET or TERMINATE');
    const directed = await this.app.workers.direct(toTarget(request.target), state);
    // An answer names a bounded number of workers, however large the fleet.
    return { workerIds: directed.slice(0, MAX_PAGE_SIZE), directed: directed.length };
  }

  async listQueues(request: ListQueuesRequest) {
    const page = await this.app.jobs.listQueues(pageRequest(request.pageSize, request.pageToken, queueNameProblem));
    return { queues: page.items.map(({ queue, ...counts }) => ({ name: queue, ...counts })), nextPageToken: page.nextAfter ?? '' };
  }

  /** Streams job events of every replica until the client cancels; keepalives keep proxies from cutting it. */
  async *watchEvents(request: WatchEventsRequest, context: CallContext): AsyncGenerator<WatchEventsResponse> {
    const outbox = new AsyncQueue<WatchEventsResponse>();
    const unwatch = this.app.events.watch({ types: request.types, queues: request.queues }, (event) =>
      outbox.push({ event: toProtoEvent(event) }),
    );
    const keepalive = setInterval(() => outbox.push({ event: undefined }), this.app.context.settings.streamKeepaliveMs);
    const endOnAbort = (): void => outbox.end();
    context.signal.addEventListener('abort', endOnAbort);
    this.eventStreams.add(outbox);
    try {
      yield* outbox;
    } finally {
      unwatch();
      clearInterval(keepalive);
      context.signal.removeEventListener('abort', endOnAbort);
      this.eventStreams.delete(outbox);
    }
  }
}

function toProtoEvent(event: JobEvent): ProtoJobEvent {
  return {
    type: event.type,
    time: toDate(event.at),
    jobId: event.jobId,
    jobType: event.jobType,
    queue: event.queue,
    attempt: event.attempt,
    workerId: event.workerId ?? '',
    data: { timeout_kind: event.timeoutKind, limit_seconds: event.limitSeconds, elapsed_seconds: event.elapsedSeconds },
  };
}

function toTarget(target: SetWorkerStateRequest['target']): WorkerTarget {
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
  const unknownTarget: never = target;
  throw new Error(`unknown worker target: ${String(unknownTarget)}`);
}

function toWorkerInfo({ worker, heldJobIds }: WorkerSnapshot): WorkerInfo {
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
