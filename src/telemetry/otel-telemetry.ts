import { SpanKind, type Attributes, type Counter, type Histogram, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import type { HeartbeatAge, Telemetry } from '../app/ports';
import type { Clock } from '../domain/clock';
import type { JobEvent } from '../domain/job-event';
import type { JobTransition, WorkerTransition } from '../domain/transition';
import { ATTR, METRIC, SPAN } from './telemetry-names';

/**
 * One span per job or worker state transition and per timeout event, and
 * the metrics of timeouts.md 11.2. With no SDK started the tracer and meter
 * are no-ops and spans are not recording, so attributes are only built for
 * spans that will be exported.
 */
export class OtelTelemetry implements Telemetry {
  private readonly timeouts: Counter;
  private readonly executionDuration: Histogram;
  private readonly enqueueWait: Histogram;

  constructor(
    private readonly tracer: Tracer,
    private readonly meter: Meter,
    private readonly clock: Clock,
  ) {
    this.timeouts = meter.createCounter(METRIC.timeoutCount, { description: 'Jobs timed out, by timeout kind' });
    this.executionDuration = meter.createHistogram(METRIC.executionDuration, { description: 'Duration of job attempts', unit: 's' });
    this.enqueueWait = meter.createHistogram(METRIC.enqueueWait, { description: 'Time from available to first attempt', unit: 's' });
  }

  jobTransitions(transitions: readonly JobTransition[]): void {
    for (const t of transitions) {
      this.measure(t);
      this.span(SPAN.jobTransition, () => ({
        [ATTR.jobId]: t.jobId,
        [ATTR.jobType]: t.type,
        [ATTR.jobQueue]: t.queue,
        [ATTR.jobAttempt]: t.attempt,
        [ATTR.jobStateFrom]: t.from,
        [ATTR.jobStateTo]: t.to,
        [ATTR.jobState]: t.to,
        ...(t.workerId === undefined ? {} : { [ATTR.workerId]: t.workerId }),
      }));
    }
  }

  workerTransition(t: WorkerTransition): void {
    this.span(SPAN.workerTransition, () => ({
      [ATTR.workerId]: t.workerId,
      [ATTR.workerStateFrom]: t.from,
      [ATTR.workerStateTo]: t.to,
      ...(t.reason === undefined ? {} : { [ATTR.workerReason]: t.reason }),
    }));
  }

  /** A span for the event, carrying it as a span event too (timeouts.md 11.1), and the timeout counter. */
  jobEvent(event: JobEvent): void {
    this.timeouts.add(1, { timeout_kind: event.timeoutKind, queue: event.queue, job_type: event.jobType });
    const data = (): Attributes => ({
      [ATTR.jobId]: event.jobId,
      [ATTR.jobType]: event.jobType,
      [ATTR.jobQueue]: event.queue,
      [ATTR.jobAttempt]: event.attempt,
      [ATTR.timeoutKind]: event.timeoutKind,
      [ATTR.limitSeconds]: event.limitSeconds,
      [ATTR.elapsedSeconds]: event.elapsedSeconds,
      ...(event.workerId === undefined ? {} : { [ATTR.workerId]: event.workerId }),
    });
    this.span(
      SPAN.jobEvent,
      () => ({ ...data(), [ATTR.eventType]: event.type }),
      event.at,
      (span) => span.addEvent(event.type, data(), event.at),
    );
  }

  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void {
    const gauge = this.meter.createObservableGauge(METRIC.heartbeatAge, {
      description: 'Time since the stalest active job of a queue last showed signs of life',
      unit: 's',
    });
    gauge.addCallback(async (result) => {
      for (const { queue, ageMs } of await read()) result.observe(ageMs / 1000, { queue });
    });
  }

  /** Attempts that ended feed the execution histogram; first attempts that started, the wait histogram. */
  private measure(t: JobTransition): void {
    if (t.startedAt === undefined) return;
    if (t.to === 'active') {
      if (t.attempt === 1 && t.enqueuedAt !== undefined)
        this.enqueueWait.record(Math.max(0, t.startedAt - t.enqueuedAt) / 1000, { queue: t.queue });
      return;
    }
    if (t.from !== 'active' || (t.to === 'available' && t.errorType === undefined)) return;
    const outcome = t.to === 'completed' || t.to === 'cancelled' ? t.to : (t.errorType ?? 'failed');
    this.executionDuration.record(Math.max(0, this.clock.now() - t.startedAt) / 1000, { queue: t.queue, job_type: t.type, outcome });
  }

  /**
   * Starts and ends one span. Attributes are built only for a recording span
   * (none are without an SDK), which keeps the hot path cheap.
   */
  private span(name: string, attributes: () => Attributes, at?: number, decorate?: (span: Span) => void): void {
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, ...(at === undefined ? {} : { startTime: at }) });
    if (span.isRecording()) {
      span.setAttributes({ [ATTR.messagingSystem]: 'ojs', ...attributes() });
      decorate?.(span);
    }
    span.end(at);
  }
}
