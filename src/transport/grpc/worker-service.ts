import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import { invalidRequest, OjsError, quote, workerNotFound } from '../../domain/errors';
import type { ProgressInput } from '../../domain/progress';
import { DELIVERY_BUDGET_BYTES } from '../../domain/limits';
import type { WorkerState } from '../../domain/worker';
import type { BeatMemory } from '../../app/worker-registry';
import type { SettlementOutcome } from '../../store/job-store';
import {
  type AckBatchRequest,
  type AckRequest,
  type BeatRequest,
  type DeregisterRequest,
  type ExtendLeaseRequest,
  type FailBatchRequest,
  type FailRequest,
  type RegisterRequest,
  type ReportProgressRequest,
  type BeatResponse,
  type FetchRequest,
  type FetchResponse,
  type SettlementResult,
  type WorkerServiceImplementation,
} from '../../../gen/ojs/server/v1/worker_service';
import { JobState as ProtoJobState } from '../../../gen/ojs/server/v1/job';
import { AsyncQueue } from '../../../lib/async-queue';
import { fromProtoWorkerState, toProtoJobState, toProtoWorkerState } from './enum-mapping';
import { principalOf } from './auth-context';
import { shuttingDown } from './shutting-down';
import { toFailureReport } from './job-mapper';
import { frameDeliveries } from './fetch-framing';
import { fromDuration, toDate, toDuration } from './time-mapping';

/**
 * WorkerService handlers: decode, call the application, encode. The only
 * state kept here is the set of open Beat streams, so that a server shutdown
 * can end them with UNAVAILABLE.
 */
export class WorkerServiceHandlers implements WorkerServiceImplementation {
  private readonly beatStreams = new Set<AsyncQueue<BeatResponse>>();
  /** Set by endStreams: a Beat stream whose handler starts after it (admitted just before shutdown) ends at once. */
  private isEnded = false;

  constructor(private readonly app: Application) {}

  /** Ends every open stream with UNAVAILABLE so that workers reconnect to another replica. */
  endStreams(): void {
    this.isEnded = true;
    this.app.streams.endAll('server_shutdown');
    for (const outbox of this.beatStreams) outbox.fail(shuttingDown());
  }

  async register(request: RegisterRequest, context: CallContext) {
    const settings = await this.app.workers.register(principalOf(context), {
      workerId: request.workerId,
      hostname: request.hostname,
      pid: request.pid,
      queues: request.queues,
      concurrency: request.concurrency,
      labels: request.labels,
      ...(request.startedAt === undefined ? {} : { startedAt: request.startedAt.getTime() }),
    });
    return {
      ok: true,
      serverTime: this.now(),
      heartbeatInterval: toDuration(settings.heartbeatIntervalMs),
      heartbeatTimeout: toDuration(settings.heartbeatTimeoutMs),
      visibilityTimeoutDefault: toDuration(settings.visibilityTimeoutMs),
      streamKeepaliveInterval: toDuration(settings.streamKeepaliveMs),
    };
  }

  async deregister(request: DeregisterRequest, context: CallContext) {
    return { releasedJobIds: await this.app.workers.deregister(principalOf(context), request.workerId) };
  }

  async *fetch(request: FetchRequest, context: CallContext): AsyncGenerator<FetchResponse> {
    const maxWaitMs = fromDuration(request.maxWait) ?? 0;
    const session = await this.app.streams.openFetch(principalOf(context), request.workerId, request.queues, maxWaitMs);
    const endOnAbort = (): void => session.end('client_cancelled');
    context.signal.addEventListener('abort', endOnAbort);
    // A keepalive goes only after an interval with nothing sent: every message restarts the countdown.
    const keepalive = setInterval(() => this.app.streams.keepalive(session), this.app.context.settings.streamKeepaliveMs);
    const maxWait = maxWaitMs > 0 ? setTimeout(() => session.end('max_wait'), maxWaitMs) : undefined;
    try {
      for await (const jobs of this.app.streams.deliveries(session)) {
        const serverTime = this.now();
        if (jobs.length === 0) yield { deliveries: [], serverTime };
        else yield* frameDeliveries(jobs, serverTime, DELIVERY_BUDGET_BYTES);
        keepalive.refresh();
      }
      if (session.endReason === 'server_shutdown') throw shuttingDown();
    } finally {
      context.signal.removeEventListener('abort', endOnAbort);
      clearInterval(keepalive);
      clearTimeout(maxWait);
    }
  }

  async ack(request: AckRequest, context: CallContext) {
    const [outcome] = await this.app.settlement.ack(principalOf(context), request.workerId, [
      { jobId: request.jobId, leaseToken: request.leaseToken, result: request.result },
    ]);
    if (!outcome!.ok) throw outcome!.error;
    return {};
  }

  async ackBatch(request: AckBatchRequest, context: CallContext) {
    const outcomes = await this.app.settlement.ack(principalOf(context), request.workerId, request.completions);
    return { results: outcomes.map((outcome, i) => toSettlementResult(request.completions[i]!.jobId, outcome)) };
  }

  async fail(request: FailRequest, context: CallContext) {
    const [outcome] = await this.app.settlement.fail(principalOf(context), request.workerId, [
      { jobId: request.jobId, leaseToken: request.leaseToken, report: toFailureReport(request.error, 'error') },
    ]);
    if (!outcome!.ok) throw outcome!.error;
    return { state: toProtoJobState(outcome!.transition.to), nextRetryAt: toDate(outcome!.nextRetryAt) };
  }

  async failBatch(request: FailBatchRequest, context: CallContext) {
    const items = request.failures.map((f, i) => ({
      jobId: f.jobId,
      leaseToken: f.leaseToken,
      report: toFailureReport(f.error, `failures[${i}].error`),
    }));
    const outcomes = await this.app.settlement.fail(principalOf(context), request.workerId, items);
    return { results: outcomes.map((outcome, i) => toSettlementResult(items[i]!.jobId, outcome)) };
  }

  async extendLease(request: ExtendLeaseRequest, context: CallContext) {
    const expiresAt = await this.app.settlement.extendLease(principalOf(context), request.workerId, request.jobId, request.leaseToken);
    return { leaseExpiresAt: toDate(expiresAt) };
  }

  async reportProgress(request: ReportProgressRequest, context: CallContext) {
    const update: ProgressInput = { data: request.data, checkpoint: request.checkpoint };
    if (request.progress !== undefined) update.progress = request.progress;
    const outcome = await this.app.settlement.reportProgress(
      principalOf(context),
      request.workerId,
      request.jobId,
      request.leaseToken,
      update,
    );
    return { applied: outcome.applied, leaseExpiresAt: toDate(outcome.leaseExpiresAt) };
  }

  /**
   * Answers every beat, and pushes directives, cancellations, timeouts and
   * keepalives in between. The stream is bound to the worker of its first
   * message, which must be the caller's: it is checked before the stream
   * hears any push for it.
   */
  async *beat(requests: AsyncIterable<BeatRequest>, context: CallContext): AsyncGenerator<BeatResponse> {
    const caller = principalOf(context);
    const outbox = new AsyncQueue<BeatResponse>();
    const stream = { workerId: '', state: 'running' as WorkerState, detach: (): void => {}, memory: {} as BeatMemory };
    const push = (
      state: WorkerState,
      jobs: { cancelled?: string[]; timedOut?: string[]; reclaimed?: string[] } = {},
      inReplyTo = 0,
    ): void => {
      stream.state = state;
      outbox.push({
        state: toProtoWorkerState(state),
        serverTime: this.now(),
        cancelledJobIds: jobs.cancelled ?? [],
        timedOutJobIds: jobs.timedOut ?? [],
        reclaimedJobIds: jobs.reclaimed ?? [],
        inReplyTo,
      });
      // Beats are answered every heartbeat interval: a keepalive goes only after an interval with nothing sent.
      keepalive.refresh();
    };
    const keepalive = setInterval(() => {
      if (stream.workerId !== '') push(stream.state);
    }, this.app.context.settings.streamKeepaliveMs);
    this.beatStreams.add(outbox);
    if (this.isEnded) outbox.fail(shuttingDown());

    const readBeats = async (): Promise<void> => {
      for await (const request of requests) {
        if (stream.workerId === '') {
          stream.memory = await this.app.workers.startBeats(caller, request.workerId);
          stream.workerId = request.workerId;
          stream.detach = this.app.streams.attachBeat(stream.workerId, {
            directed: (state) => push(state),
            cancelled: (jobIds) => push(stream.state, { cancelled: jobIds }),
            timedOut: (jobIds) => push(stream.state, { timedOut: jobIds }),
            reclaimed: (jobIds) => push(stream.state, { reclaimed: jobIds }),
            removed: () => outbox.fail(workerNotFound(stream.workerId)),
          });
        } else if (request.workerId !== stream.workerId) {
          throw invalidRequest('worker_id', 'must be the same on every message of a Beat stream');
        }
        const state = fromProtoWorkerState(request.state);
        if (state === undefined) throw invalidRequest('state', 'must be RUNNING, QUIET or TERMINATE');
        const outcome = await this.app.workers.beat(
          caller,
          { workerId: stream.workerId, state, sequence: request.sequence, activeJobIds: request.activeJobIds },
          stream.memory,
        );
        push(
          outcome.desiredState,
          { cancelled: outcome.cancelledJobIds, timedOut: outcome.timedOutJobIds, reclaimed: outcome.reclaimedJobIds },
          request.sequence,
        );
      }
      outbox.end();
    };
    readBeats().catch((error: unknown) => outbox.fail(error));
    try {
      yield* outbox;
    } finally {
      clearInterval(keepalive);
      stream.detach();
      this.beatStreams.delete(outbox);
      if (!context.signal.aborted) outbox.end();
    }
  }

  private now(): Date {
    return new Date(this.app.context.clock.now());
  }
}

function toSettlementResult(jobId: string, outcome: SettlementOutcome): SettlementResult {
  if (outcome.ok) {
    return {
      jobId,
      ok: true,
      errorCode: '',
      errorMessage: '',
      state: toProtoJobState(outcome.transition.to),
      nextRetryAt: toDate(outcome.nextRetryAt),
    };
  }
  const error = outcome.error instanceof OjsError ? outcome.error : new OjsError('backend_error', 'internal error');
  return {
    // A refused item's id may be anything a client sent: echo it shortened, so 10,000 of them fit one answer.
    jobId: quote(jobId),
    ok: false,
    errorCode: error.code,
    errorMessage: error.message,
    state: ProtoJobState.JOB_STATE_UNSPECIFIED,
    nextRetryAt: undefined,
  };
}
