import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import { OjsError, quote } from '../../domain/errors';
import type { ProgressInput } from '../../domain/progress';
import type { SettlementOutcome } from '../../store/job-store';
import {
  WorkerServiceDefinition,
  type AckBatchRequest,
  type AckBatchResponse,
  type AckRequest,
  type AckResponse,
  type DeregisterRequest,
  type ExtendLeaseRequest,
  type FailBatchRequest,
  type FailBatchResponse,
  type FailRequest,
  type FailResponse,
  type RegisterRequest,
  type ReportProgressRequest,
  type SettlementResult,
  type WorkerServiceImplementation,
} from '../../../gen/ojs/server/v1/worker_service';
import { JobState as ProtoJobState } from '../../../gen/ojs/server/v1/job';
import { toProtoJobState } from './enum-mapping';
import { principalOf } from './auth-context';
import type { CallGate } from './call-gate';
import type { CallerContext } from './caller-context';
import { directUnary } from './direct-unary';
import type { DirectMethod } from './service-host';
import { toFailureReport } from './job-mapper';
import { toDate, toDuration } from './time-mapping';

/**
 * WorkerService's unary handlers: decode, call the application, encode.
 * Its streams, Beat and Fetch, are served on grpc-js directly
 * (beat-streams.ts, fetch-streams.ts), and so are the settlements every job
 * goes through (Ack, AckBatch, Fail, FailBatch: direct-unary.ts); the rest
 * through nice-grpc.
 */
export class WorkerServiceHandlers implements Omit<WorkerServiceImplementation, 'beat' | 'fetch' | DirectSettlement> {
  constructor(private readonly app: Application) {}

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

  async ack(request: AckRequest, caller: CallerContext): Promise<AckResponse> {
    const [outcome] = await this.app.settlement.ack(caller.principal, request.workerId, [
      { jobId: request.jobId, leaseToken: request.leaseToken, result: request.result },
    ]);
    if (!outcome!.ok) throw outcome!.error;
    return {};
  }

  async ackBatch(request: AckBatchRequest, caller: CallerContext): Promise<AckBatchResponse> {
    const outcomes = await this.app.settlement.ack(caller.principal, request.workerId, request.completions);
    return { results: outcomes.map((outcome, i) => toSettlementResult(request.completions[i]!.jobId, outcome)) };
  }

  async fail(request: FailRequest, caller: CallerContext): Promise<FailResponse> {
    const [outcome] = await this.app.settlement.fail(caller.principal, request.workerId, [
      { jobId: request.jobId, leaseToken: request.leaseToken, report: toFailureReport(request.error, 'error') },
    ]);
    if (!outcome!.ok) throw outcome!.error;
    return { state: toProtoJobState(outcome!.state), nextRetryAt: toDate(outcome!.nextRetryAt) };
  }

  async failBatch(request: FailBatchRequest, caller: CallerContext): Promise<FailBatchResponse> {
    const items = request.failures.map((f, i) => ({
      jobId: f.jobId,
      leaseToken: f.leaseToken,
      report: toFailureReport(f.error, `failures[${i}].error`),
    }));
    const outcomes = await this.app.settlement.fail(caller.principal, request.workerId, items);
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

  private now(): Date {
    return new Date(this.app.context.clock.now());
  }
}

/** The settlements served on grpc-js directly. */
type DirectSettlement = 'ack' | 'ackBatch' | 'fail' | 'failBatch';

/** The settlements as the service host serves them (direct-unary.ts). */
export function directSettlements(handlers: WorkerServiceHandlers, gate: CallGate): Record<DirectSettlement, DirectMethod> {
  const { methods } = WorkerServiceDefinition;
  return {
    ack: directUnary(gate, WorkerServiceDefinition, methods.ack, handlers.ack.bind(handlers)),
    ackBatch: directUnary(gate, WorkerServiceDefinition, methods.ackBatch, handlers.ackBatch.bind(handlers)),
    fail: directUnary(gate, WorkerServiceDefinition, methods.fail, handlers.fail.bind(handlers)),
    failBatch: directUnary(gate, WorkerServiceDefinition, methods.failBatch, handlers.failBatch.bind(handlers)),
  };
}

function toSettlementResult(jobId: string, outcome: SettlementOutcome): SettlementResult {
  if (outcome.ok) {
    return {
      jobId,
      ok: true,
      errorCode: '',
      errorMessage: '',
      state: toProtoJobState(outcome.state),
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
