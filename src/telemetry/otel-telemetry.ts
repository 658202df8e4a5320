import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Meter, type Tracer } from '@opentelemetry/api';
import type { HeartbeatAge, QueueJobCounts, Telemetry } from '../app/ports';
import { eventDraftsOf, type EventDraft } from '../domain/event-catalog';
import type { TimeoutKind } from '../domain/timeouts';
import type { JobTransition, WorkerTransition } from '../domain/transition';
import type { WorkflowPlan } from '../domain/workflow-plan';
import { eventAttributes, timeoutKindOf } from './event-attributes';
import { JobMetrics } from './job-metrics';
import { observeQueueGauges } from './queue-gauges';
import { singleFlight } from './single-flight';
import { ATTR, METRIC, SPAN } from './telemetry-names';
import { formatTraceparent, withJobTrace } from './trace-context';

/**
 * One span per job or worker state transition, and the metrics of
 * ojs-events 7 and timeouts.md 11.2. A job transition's span carries the
 * lifecycle events the transition stands for as span events, and joins the
 * job's trace: its parent is the producer's context the job carries
 * (meta.traceparent), so a job is one trace from enqueue to its end.
 *
 * With no SDK started the tracer and meter are no-ops and spans are not
 * recording, so attributes and span events are only built for spans that
 * will be exported.
 */
export class OtelTelemetry implements Telemetry {
  private readonly metrics: JobMetrics;

  constructor(
    private readonly tracer: Tracer,
    private readonly meter: Meter,
    /**
     * Whether the tracer or the meter exports anything. When neither does,
     * job transitions are not even read: a store may build them only when
     * read (SettlementOutcome), and a batch of acks would otherwise decode
     * each job's for nothing.
     */
    private readonly isExporting = true,
  ) {
    this.metrics = new JobMetrics(meter);
  }

  jobTransitions(transitions: Iterable<JobTransition>): void {
    if (!this.isExporting) return;
    for (const t of transitions) {
      // Derived once, and only when a metric or a recording span needs them.
      let events: EventDraft[] | undefined;
      const eventsOf = (): EventDraft[] => (events ??= eventDraftsOf({ kind: 'job', ...t }));
      this.metrics.record(t, eventsOf);
      this.transitionSpan(t, eventsOf);
    }
  }

  workerTransition(t: WorkerTransition): void {
    const span = this.tracer.startSpan(SPAN.workerTransition, { kind: SpanKind.INTERNAL });
    if (span.isRecording()) {
      span.setAttributes({
        [ATTR.messagingSystem]: 'ojs',
        [ATTR.workerId]: t.workerId,
        [ATTR.workerStateFrom]: t.from,
        [ATTR.workerStateTo]: t.to,
        ...(t.reason === undefined ? {} : { [ATTR.workerReason]: t.reason }),
      });
    }
    span.end();
  }

  workflowCreated(plan: WorkflowPlan, traceparent?: string): string | undefined {
    const parent = withJobTrace(context.active(), traceparent);
    const name = plan.name === '' ? SPAN.workflow : `${SPAN.workflow} ${plan.name}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
    if (span.isRecording()) {
      span.setAttributes({
        [ATTR.messagingSystem]: 'ojs',
        [ATTR.workflowId]: plan.id,
        [ATTR.workflowType]: plan.type,
        [ATTR.workflowName]: plan.name,
        [ATTR.workflowJobCount]: plan.jobCount,
      });
    }
    span.end();
    return formatTraceparent(span.spanContext());
  }

  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void {
    const gauge = this.meter.createObservableGauge(METRIC.heartbeatAge, {
      description: 'Time since the stalest active job of a queue last showed signs of life',
      unit: 's',
    });
    const readShared = singleFlight(read);
    gauge.addCallback(async (result) => {
      for (const { queue, ageMs } of await readShared()) result.observe(ageMs / 1000, { queue });
    });
  }

  observeQueueCounts(read: () => Promise<QueueJobCounts[]>): void {
    observeQueueGauges(this.meter, read);
  }

  /**
   * The transition's span, in the job's trace. The job's first transition
   * (its enqueue) is a PRODUCER span, as ojs-events 8.4 has the enqueue
   * span: it is where the job enters the queue; the rest are INTERNAL. A
   * transition that records a failed attempt or an expiry is an error span
   * (ojs-distributed-tracing 8.1).
   */
  private transitionSpan(t: JobTransition, eventsOf: () => readonly EventDraft[]): void {
    const parent = withJobTrace(context.active(), t.traceparent);
    const kind = t.from === 'none' ? SpanKind.PRODUCER : SpanKind.INTERNAL;
    const span = this.tracer.startSpan(SPAN.jobTransition, { kind }, parent);
    if (span.isRecording()) {
      const events = eventsOf();
      span.setAttributes(transitionAttributes(t));
      if (t.error !== undefined && events.some((e) => e.type === 'job.failed' || e.type === 'job.expired')) {
        span.setAttributes({ [ATTR.errorType]: t.error.type, [ATTR.errorMessage]: t.error.message });
        span.setStatus({ code: SpanStatusCode.ERROR, message: t.error.type });
      }
      for (const event of events) span.addEvent(event.type, eventAttributes(event.data));
      for (const event of events) {
        const timeoutKind = timeoutKindOf(event.type);
        if (timeoutKind !== undefined) this.timeoutSpan(t, event, timeoutKind, trace.setSpan(parent, span));
      }
    }
    span.end();
  }

  /**
   * A timeout event also gets an `ojs.job.event` span of its own (a child of
   * its transition's), as before events rode on transition spans: what
   * dashboards built on those spans query.
   */
  private timeoutSpan(t: JobTransition, event: EventDraft, kind: TimeoutKind, parent: Context): void {
    const span = this.tracer.startSpan(SPAN.jobEvent, { kind: SpanKind.INTERNAL }, parent);
    const { limit_seconds: limit, elapsed_seconds: elapsed } = event.data;
    span.setAttributes({
      [ATTR.messagingSystem]: 'ojs',
      [ATTR.jobId]: t.jobId,
      [ATTR.jobType]: t.jobType,
      [ATTR.jobQueue]: t.queue,
      [ATTR.jobAttempt]: t.attempt,
      [ATTR.eventType]: event.type,
      [ATTR.timeoutKind]: kind,
      ...(typeof limit === 'number' ? { [ATTR.limitSeconds]: limit } : {}),
      ...(typeof elapsed === 'number' ? { [ATTR.elapsedSeconds]: elapsed } : {}),
      ...(t.workerId === undefined ? {} : { [ATTR.workerId]: t.workerId }),
    });
    span.addEvent(event.type, eventAttributes(event.data));
    span.end();
  }
}

function transitionAttributes(t: JobTransition): Attributes {
  return {
    [ATTR.messagingSystem]: 'ojs',
    [ATTR.jobId]: t.jobId,
    [ATTR.jobType]: t.jobType,
    [ATTR.jobQueue]: t.queue,
    [ATTR.jobAttempt]: t.attempt,
    [ATTR.jobStateFrom]: t.from,
    [ATTR.jobStateTo]: t.to,
    [ATTR.jobState]: t.to,
    ...(t.workerId === undefined ? {} : { [ATTR.workerId]: t.workerId }),
  };
}
