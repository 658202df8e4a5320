import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import type { BulkOperation, JobSelection } from '../../app/bulk-changes';
import { invalidRequest } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import { queueNameProblem, workerIdProblem } from '../../domain/identifiers';
import { isListingKey } from '../../domain/job-query';
import { MAX_PAGE_SIZE, pageRequest } from '../../domain/paging';
import type { WorkerFilter } from '../../store/job-store';
import {
  ListOrder,
  type CancelJobsRequest,
  type DeleteJobsRequest,
  type GetQueueStatsRequest,
  type JobSelection as ProtoJobSelection,
  type ListJobsRequest,
  type ListQueuesRequest,
  type ListWorkersRequest,
  type OperatorServiceImplementation,
  type PauseQueueRequest,
  type ResumeQueueRequest,
  type SetQueueLimitsRequest,
  type RetryJobsRequest,
  type SetWorkerStateRequest,
  type WatchEventsRequest,
  type WatchEventsResponse,
} from '../../../gen/ojs/server/v1/operator_service';
import { AsyncQueue } from '../../../lib/async-queue';
import { fromProtoWorkerState } from './enum-mapping';
import { toJobFilterInput } from './job-filter-mapping';
import { toProtoJob } from './job-mapper';
import {
  fromProtoQueueLimits,
  toProtoBulkResult,
  toProtoEvent,
  toQueueInfo,
  toQueueStats,
  toTarget,
  toWorkerInfo,
} from './operator-mapping';
import { principalOf } from './auth-context';
import { fromPageToken, toPageToken } from './page-token';
import { shuttingDown } from './shutting-down';

/** OperatorService handlers: the fleet, the queues, the jobs and the event feed. */
export class OperatorServiceHandlers implements OperatorServiceImplementation {
  private readonly eventStreams = new Set<AsyncQueue<WatchEventsResponse>>();
  /** Set by endStreams: a stream still opening at shutdown ends as soon as it is open. */
  private isEnded = false;

  constructor(private readonly app: Application) {}

  /** Ends every open WatchEvents stream with UNAVAILABLE (server shutdown). */
  endStreams(): void {
    this.isEnded = true;
    for (const outbox of this.eventStreams) outbox.fail(shuttingDown());
  }

  async listWorkers(request: ListWorkersRequest, context: CallContext) {
    const filter: WorkerFilter = {};
    if (request.label !== '') filter.label = request.label;
    if (request.queue !== '') filter.queue = request.queue;
    const page = await this.app.workers.list(
      principalOf(context),
      filter,
      pageRequest(request.pageSize, request.pageToken, workerIdProblem),
    );
    return { workers: page.items.map(toWorkerInfo), nextPageToken: page.nextAfter ?? '' };
  }

  async setWorkerState(request: SetWorkerStateRequest, context: CallContext) {
    const state = fromProtoWorkerState(request.state);
    if (state === undefined) throw invalidRequest('state', 'must be RUNNING, QUIET or TERMINATE');
    const directed = await this.app.workers.direct(principalOf(context), toTarget(request.target), state);
    // An answer names a bounded number of workers, however large the fleet.
    return { workerIds: directed.slice(0, MAX_PAGE_SIZE), directed: directed.length };
  }

  async listQueues(request: ListQueuesRequest, context: CallContext) {
    const page = await this.app.queues.list(principalOf(context), pageRequest(request.pageSize, request.pageToken, queueNameProblem));
    const now = this.now();
    return { queues: page.items.map((counts) => toQueueInfo(counts, now)), nextPageToken: page.nextAfter ?? '' };
  }

  async pauseQueue(request: PauseQueueRequest, context: CallContext) {
    return { queue: toQueueInfo(await this.app.queues.setPaused(principalOf(context), request.queue, true), this.now()) };
  }

  async resumeQueue(request: ResumeQueueRequest, context: CallContext) {
    return { queue: toQueueInfo(await this.app.queues.setPaused(principalOf(context), request.queue, false), this.now()) };
  }

  async setQueueLimits(request: SetQueueLimitsRequest, context: CallContext) {
    const limits = fromProtoQueueLimits(request.limits);
    return { queue: toQueueInfo(await this.app.queues.setLimits(principalOf(context), request.queue, limits), this.now()) };
  }

  async getQueueStats(request: GetQueueStatsRequest, context: CallContext) {
    return toQueueStats(await this.app.queues.stats(principalOf(context), request.queue), this.now());
  }

  async listJobs(request: ListJobsRequest, context: CallContext) {
    const after = fromPageToken(request.pageToken, isListingKey);
    const page = await this.app.listing.list(principalOf(context), {
      filter: toJobFilterInput(request.filter),
      order: request.order === ListOrder.LIST_ORDER_OLDEST_FIRST ? 'oldest' : 'newest',
      pageSize: request.pageSize,
      ...(after === undefined ? {} : { after }),
    });
    return { jobs: page.items.map(toProtoJob), nextPageToken: toPageToken(page.nextAfter) };
  }

  async cancelJobs(request: CancelJobsRequest, context: CallContext) {
    return { result: await this.bulk(principalOf(context), 'cancel', request.selection, request.reason) };
  }

  async retryJobs(request: RetryJobsRequest, context: CallContext) {
    return { result: await this.bulk(principalOf(context), 'retry', request.selection) };
  }

  async deleteJobs(request: DeleteJobsRequest, context: CallContext) {
    return { result: await this.bulk(principalOf(context), 'delete', request.selection) };
  }

  /**
   * Streams lifecycle events of every replica until the client cancels,
   * resuming after `after` when asked; keepalives keep proxies from cutting it.
   */
  async *watchEvents(request: WatchEventsRequest, context: CallContext): AsyncGenerator<WatchEventsResponse> {
    // Opening checks the request and the resume point: a refusal ends the call before any message.
    const stream = await this.app.events.open(principalOf(context), {
      types: request.types,
      queues: request.queues,
      jobTypes: request.jobTypes,
      jobIds: request.jobIds,
      after: request.after,
      includeHeartbeats: request.includeHeartbeats,
    });
    const outbox = new AsyncQueue<WatchEventsResponse>();
    const pump = async (): Promise<void> => {
      for await (const event of stream.events) outbox.push({ event: toProtoEvent(event) });
      outbox.end();
    };
    pump().catch((error: unknown) => outbox.fail(error));
    const keepalive = setInterval(() => outbox.push({ event: undefined }), this.app.context.settings.streamKeepaliveMs);
    const endOnAbort = (): void => outbox.end();
    context.signal.addEventListener('abort', endOnAbort);
    this.eventStreams.add(outbox);
    if (this.isEnded) outbox.fail(shuttingDown());
    try {
      yield* outbox;
    } finally {
      stream.close();
      clearInterval(keepalive);
      context.signal.removeEventListener('abort', endOnAbort);
      this.eventStreams.delete(outbox);
    }
  }

  private async bulk(caller: Principal, operation: BulkOperation, selection: ProtoJobSelection | undefined, reason?: string) {
    const result = await this.app.bulk.apply(caller, {
      operation,
      selection: toSelection(selection),
      dryRun: selection?.dryRun ?? false,
      ...(reason === undefined || reason === '' ? {} : { reason }),
    });
    return toProtoBulkResult(result, operation);
  }

  private now(): number {
    return this.app.context.clock.now();
  }
}

function toSelection(selection: ProtoJobSelection | undefined): JobSelection {
  const target = selection?.target;
  if (target === undefined) throw invalidRequest('selection', 'set job_ids or filter');
  if (target.$case === 'jobIds') return { kind: 'ids', ids: target.value.ids };
  const after = fromPageToken(selection!.pageToken, isListingKey, 'selection.page_token');
  return {
    kind: 'filter',
    filter: toJobFilterInput(target.value, 'selection.filter'),
    limit: selection!.limit,
    ...(after === undefined ? {} : { after }),
  };
}
