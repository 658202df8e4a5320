import type { HeartbeatAge, Telemetry } from '../../src/app/ports';
import type { JobEvent } from '../../src/domain/job-event';
import type { JobTransition, WorkerTransition } from '../../src/domain/transition';

/**
 * The Telemetry port as a list of what it was told, for tests of the app
 * layer that assert on transitions and events without OpenTelemetry.
 */
export class RecordingTelemetry implements Telemetry {
  readonly transitions: JobTransition[] = [];
  readonly workerTransitions: WorkerTransition[] = [];
  readonly events: JobEvent[] = [];
  /** What the heartbeat-age gauge would read from, once the server wired it. */
  heartbeatAges: (() => Promise<HeartbeatAge[]>) | undefined;

  jobTransitions(transitions: readonly JobTransition[]): void {
    this.transitions.push(...transitions);
  }

  workerTransition(transition: WorkerTransition): void {
    this.workerTransitions.push(transition);
  }

  jobEvent(event: JobEvent): void {
    this.events.push(event);
  }

  observeHeartbeatAges(read: () => Promise<HeartbeatAge[]>): void {
    this.heartbeatAges = read;
  }

  /** The transitions of one job, in the order they were recorded, as "from>to". */
  pathOf(jobId: string): string[] {
    return this.transitions.filter((t) => t.jobId === jobId).map((t) => `${t.from}>${t.to}`);
  }
}
