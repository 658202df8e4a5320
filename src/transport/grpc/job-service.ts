import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import {
  EnqueueResponse,
  JobServiceDefinition,
  type ActivateJobRequest,
  type CancelJobRequest,
  type EnqueueRequest,
  type GetJobRequest,
  type JobServiceImplementation,
  type RetryJobRequest,
  type WaitForJobRequest,
} from '../../../gen/ojs/server/v1/job_service';
import { principalOf } from './auth-context';
import type { CallerContext } from './caller-context';
import type { CallGate } from './call-gate';
import { directUnary } from './direct-unary';
import { framedType } from './encoded-messages';
import type { DirectMethod } from './service-host';
import { writeJob } from './job-wire';
import { toProtoJob, toSubmission } from './job-mapper';
import { fromDuration } from './time-mapping';
import { traceContextOf } from './trace-metadata';

/** EnqueueResponse whose envelopes (field 1) travel encoded already: a batch answers with every stored job. */
const framedEnqueue = framedType(EnqueueResponse, 1);

/** Enqueue as the service host serves it (direct-unary.ts): its answer carries framed envelopes. */
export function directEnqueue(handlers: JobServiceHandlers, gate: CallGate): DirectMethod {
  const { enqueue } = JobServiceDefinition.methods;
  return directUnary(gate, JobServiceDefinition, enqueue, handlers.enqueue.bind(handlers), framedEnqueue.type);
}

/**
 * JobService handlers: PUSH, INFO, CANCEL, ACTIVATE and RETRY. Enqueue,
 * which every job goes through, is served on grpc-js directly
 * (direct-unary.ts); the rest through nice-grpc.
 */
export class JobServiceHandlers implements Omit<JobServiceImplementation, 'enqueue'> {
  constructor(private readonly app: Application) {}

  async enqueue(request: EnqueueRequest, caller: CallerContext): Promise<EnqueueResponse> {
    const outcomes = await this.app.jobs.enqueue(
      caller.principal,
      request.jobs.map((job, i) => toSubmission(job, `jobs[${i}]`)),
      {
        pending: request.pending,
        trace: traceContextOf(caller.metadata),
      },
    );
    return framedEnqueue.frame(
      framedEnqueue.items(outcomes, (writer, { job }) => writeJob(writer, job)),
      { jobs: [], outcomes: outcomes.map(({ deduplicated, replaced }) => ({ deduplicated, replacedJobId: replaced?.jobId ?? '' })) },
    );
  }

  async getJob(request: GetJobRequest, context: CallContext) {
    return { job: toProtoJob(await this.app.jobs.get(principalOf(context), request.jobId)) };
  }

  async cancelJob(request: CancelJobRequest, context: CallContext) {
    return { job: toProtoJob(await this.app.jobs.cancel(principalOf(context), request.jobId)) };
  }

  async activateJob(request: ActivateJobRequest, context: CallContext) {
    return { job: toProtoJob(await this.app.jobs.activate(principalOf(context), request.jobId)) };
  }

  async retryJob(request: RetryJobRequest, context: CallContext) {
    return { job: toProtoJob(await this.app.jobs.retry(principalOf(context), request.jobId)) };
  }

  async waitForJob(request: WaitForJobRequest, context: CallContext) {
    const { job, finished } = await this.app.results.wait(
      principalOf(context),
      request.jobId,
      fromDuration(request.maxWait) ?? 0,
      context.signal,
    );
    return { job: toProtoJob(job), finished };
  }
}
