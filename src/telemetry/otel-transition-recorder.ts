import { SpanKind, type Tracer } from '@opentelemetry/api';
import type { TransitionRecorder } from '../app/ports';
import type { JobTransition, WorkerTransition } from '../domain/transition';
import { ATTR, SPAN } from './span-names';

/**
 * One span per job or worker state transition. With no SDK started the
 * tracer is a no-op and spans are not recording, so attributes are only
 * built for spans that will be exported.
 */
export class OtelTransitionRecorder implements TransitionRecorder {
  constructor(private readonly tracer: Tracer) {}

  jobTransitions(transitions: readonly JobTransition[]): void {
    for (const t of transitions) {
      const span = this.tracer.startSpan(SPAN.jobTransition, { kind: SpanKind.INTERNAL });
      if (span.isRecording()) {
        span.setAttributes({
          [ATTR.messagingSystem]: 'ojs',
          [ATTR.jobId]: t.jobId,
          [ATTR.jobType]: t.type,
          [ATTR.jobQueue]: t.queue,
          [ATTR.jobAttempt]: t.attempt,
          [ATTR.jobStateFrom]: t.from,
          [ATTR.jobStateTo]: t.to,
          [ATTR.jobState]: t.to,
        });
        if (t.workerId !== undefined) span.setAttribute(ATTR.workerId, t.workerId);
      }
      span.end();
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
      });
      if (t.reason !== undefined) span.setAttribute(ATTR.workerReason, t.reason);
    }
    span.end();
  }
}
