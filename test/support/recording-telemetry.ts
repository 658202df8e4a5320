import type { HeartbeatAge, QueueJobCounts, Telemetry } from '../../src/app/ports';
import { eventDraftsOf, type EventDraft } from '../../src/domain/event-catalog';
import type { JobTransition, WorkerTransition } from '../../src/domain/transition';
import type { WorkflowPlan } from '../../src/domain/workflow-plan';

/**
 * The Telemetry port as a list of what it was told, for tests of the app
 * layer that assert on transitions and events without OpenTelemetry.
 */
export class RecordingTelemetry implements Telemetry {
  readonly transitions: JobTransition[] = [];
  readonly workerTransitions: WorkerTransition[] = [];
  /**
   * The lifecycle events the recorded transitions stand for, in order
   * (the domain's eventDraftsOf): what OtelTelemetry puts on their spans.
   */
  readonly events: EventDraft[] = [];
  /** What the heartbeat-age gauge would read from, once the server wired it. */
  heartbeatAges: (() => Promise<HeartbeatAge[]>) | undefined;
  /** What the queue gauges would read from, once the server wired them. */
  queueCounts: (() => Promise<QueueJobCounts[]>) | undefined;

  jobTransitions(transitions: Iterable<JobTransition>): void {
    for (const t of transitions) {
      this.transitions.push(t);
      this.events.push(...eventDraftsOf({ kind: 'job', ...t }));
    }
  }

  workerTransition(transition: WorkerTransition): void {
    this.workerTransitions.push(transition);
  }

  /** The workflows created, in order. */
  readonly workflows: WorkflowPlan[] = [];

  workflowCreated(plan: WorkflowPlan, traceparent?: string): string | undefined {
    this.workflows.push(plan);
    return traceparent;
  }

  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void {
    this.heartbeatAges = read;
  }

  observeQueueCounts(read: () => Promise<QueueJobCounts[]>): void {
    this.queueCounts = read;
  }

  /** The transitions of one job, in the order they were recorded, as "from>to". */
  pathOf(jobId: string): string[] {
    return this.transitions.filter((t) => t.jobId === jobId).map((t) => `${t.from}>${t.to}`);
  }

  /** The types of the events recorded for one job, in order. */
  eventTypesOf(jobId: string): string[] {
    return this.events.filter((e) => e.jobId === jobId).map((e) => e.type);
  }
}
