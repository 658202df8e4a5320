import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { Job, JobError } from '../gen/ojs/server/v1/job';
import { spanContextOf } from './trace-context';

/** The SDK's instrumentation scope: spans are a no-op unless the application registers an OpenTelemetry SDK. */
export const SDK_TRACER = 'ojs-sdk';

/** Span attribute names (ojs-distributed-tracing section 5). */
const ATTR = {
  messagingSystem: 'messaging.system',
  jobId: 'ojs.job.id',
  jobType: 'ojs.job.type',
  jobQueue: 'ojs.job.queue',
  jobAttempt: 'ojs.job.attempt',
  workerId: 'ojs.worker.id',
  errorType: 'error.type',
  errorMessage: 'error.message',
  errorAttempt: 'ojs.job.error.attempt',
} as const;

/**
 * The span one execution of a job runs in: `ojs.execute <job type>`, kind
 * CONSUMER (ojs-events 8.4). Its parent is the job's `meta.traceparent`, so
 * the job's enqueue, its transitions and its executions are one trace; a job
 * without one starts a trace of its own, never a child of whatever the
 * worker was doing. Ends once, with the job's outcome (ojs-distributed-tracing
 * section 8): OK when it completed or was cancelled, ERROR with the error
 * recorded when it failed.
 */
export class ExecutionSpan {
  private readonly span: Span;
  private readonly active: Context;
  private isEnded = false;

  constructor(tracer: Tracer, job: Job, workerId: string) {
    // ts-proto types google.protobuf.Struct as a record of any; its values are read as unknown.
    const meta: Record<string, unknown> | undefined = job.meta;
    const remote = spanContextOf(meta);
    const parent = remote === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, remote);
    this.span = tracer.startSpan(
      `ojs.execute ${job.type}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [ATTR.messagingSystem]: 'ojs',
          [ATTR.jobId]: job.id,
          [ATTR.jobType]: job.type,
          [ATTR.jobQueue]: job.queue,
          [ATTR.jobAttempt]: job.attempt,
          [ATTR.workerId]: workerId,
        },
      },
      parent,
    );
    this.active = trace.setSpan(parent, this.span);
  }

  /**
   * Runs `work` with this span active in the OpenTelemetry context, so that
   * spans the handler makes (directly or through instrumented libraries)
   * are its children. That needs a context manager, which every
   * OpenTelemetry Node SDK registers.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    return context.with(this.active, work);
  }

  /** The handler returned: the job is acknowledged. */
  succeeded(): void {
    this.end(() => this.span.setStatus({ code: SpanStatusCode.OK }));
  }

  /** The job was cancelled while it ran: intentional, so not an error. */
  cancelled(): void {
    this.end(() => this.span.setStatus({ code: SpanStatusCode.OK }));
  }

  /** The job failed with `error` (what the server is told); `thrown` is what the handler threw, if it threw. */
  failed(error: JobError, attempt: number, thrown?: unknown): void {
    this.end(() => {
      this.span.recordException(thrown instanceof Error ? thrown : { name: error.type, message: error.message });
      this.span.setAttributes({ [ATTR.errorType]: error.type, [ATTR.errorMessage]: error.message, [ATTR.errorAttempt]: attempt });
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    });
  }

  private end(record: () => void): void {
    if (this.isEnded) return;
    this.isEnded = true;
    record();
    this.span.end();
  }
}
