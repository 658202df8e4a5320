import type { CallContext } from 'nice-grpc';
import type { Application } from '../../app/application';
import type { TraceContext } from '../../app/job-commands';
import type {
  ActivateJobRequest,
  CancelJobRequest,
  EnqueueRequest,
  GetJobRequest,
  JobServiceImplementation,
  RetryJobRequest,
  WaitForJobRequest,
} from '../../../gen/ojs/server/v1/job_service';
import { toProtoJob, toSubmission } from './job-mapper';
import { fromDuration } from './time-mapping';

/** JobService handlers: PUSH, INFO, CANCEL, ACTIVATE and RETRY. */
export class JobServiceHandlers implements JobServiceImplementation {
  constructor(private readonly app: Application) {}

  async enqueue(request: EnqueueRequest, context: CallContext) {
    const jobs = await this.app.jobs.enqueue(
      request.jobs.map((job, i) => toSubmission(job, i)),
      {
        pending: request.pending,
        trace: traceContextOf(context),
      },
    );
    return { jobs: jobs.map(toProtoJob) };
  }

  async getJob(request: GetJobRequest) {
    return { job: toProtoJob(await this.app.jobs.get(request.jobId)) };
  }

  async cancelJob(request: CancelJobRequest) {
    return { job: toProtoJob(await this.app.jobs.cancel(request.jobId)) };
  }

  async activateJob(request: ActivateJobRequest) {
    return { job: toProtoJob(await this.app.jobs.activate(request.jobId)) };
  }

  async retryJob(request: RetryJobRequest) {
    return { job: toProtoJob(await this.app.jobs.retry(request.jobId)) };
  }

  async waitForJob(request: WaitForJobRequest, context: CallContext) {
    const { job, finished } = await this.app.results.wait(request.jobId, fromDuration(request.maxWait) ?? 0, context.signal);
    return { job: toProtoJob(job), finished };
  }
}

/** W3C trace context sent with the call (ojs-grpc-binding section 9.4). */
function traceContextOf(context: CallContext): TraceContext {
  const trace: TraceContext = {};
  const traceparent = context.metadata.get('traceparent');
  const tracestate = context.metadata.get('tracestate');
  if (traceparent !== undefined) trace.traceparent = traceparent;
  if (tracestate !== undefined) trace.tracestate = tracestate;
  return trace;
}
