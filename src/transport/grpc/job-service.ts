import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import {
  EnqueueResponse,
  type ActivateJobRequest,
  type CancelJobRequest,
  type EnqueueRequest,
  type GetJobRequest,
  type JobServiceImplementation,
  type RetryJobRequest,
  type WaitForJobRequest,
} from '../../../gen/ojs/server/v1/job_service';
import { principalOf } from './auth-context';
import { framedType } from './encoded-messages';
import { writeJob } from './job-wire';
import { toProtoJob, toSubmission } from './job-mapper';
import { fromDuration } from './time-mapping';
import { traceContextOf } from './trace-metadata';

/** EnqueueResponse whose envelopes (field 1) travel encoded already: a batch answers with every stored job. */
const framedEnqueue = framedType(EnqueueResponse, 1);

/** EnqueueResponse as the server encodes it (enqueue() answers with framed envelopes). */
export const FramedEnqueueResponseType: typeof EnqueueResponse = { ...EnqueueResponse, ...framedEnqueue.type };

/** JobService handlers: PUSH, INFO, CANCEL, ACTIVATE and RETRY. */
export class JobServiceHandlers implements JobServiceImplementation {
  constructor(private readonly app: Application) {}

  async enqueue(request: EnqueueRequest, context: CallContext) {
    const outcomes = await this.app.jobs.enqueue(
      principalOf(context),
      request.jobs.map((job, i) => toSubmission(job, `jobs[${i}]`)),
      {
        pending: request.pending,
        trace: traceContextOf(context),
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
