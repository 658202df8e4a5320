import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { EventDraft } from '../domain/event-catalog';
import type { JobTransition } from '../domain/transition';
import { timeoutKindOf } from './event-attributes';
import { BUCKETS, METRIC } from './telemetry-names';

/** The labels of the job metrics (ojs-events 7.3). */
type Labels = { queue: string; job_type: string };

/**
 * The job counters and histograms, fed by the transitions this replica
 * makes and the events each stands for (ojs-events 7.4: every increment
 * matches an event). Each replica counts its own transitions, so a backend
 * summing over replicas counts every job once.
 *
 * How the counters relate, per queue and job type:
 * - `ojs.jobs.enqueued`: jobs accepted (their first transition, into
 *   available, pending or scheduled). Re-entries into available (a retry,
 *   a promotion, a manual retry) are not new jobs and are not counted.
 * - `ojs.jobs.completed`: job.completed.
 * - `ojs.jobs.retried`: failed attempts that will run again (job.retrying).
 * - `ojs.jobs.failed`: failed attempts that ended the job (job.discarded):
 *   the spec's terminal failure. retried + failed = every failed attempt
 *   (job.failed).
 * - `ojs.jobs.discarded`: every job that entered discarded: the failed ones,
 *   plus waiting jobs a deadline expired (job.expired). So discarded -
 *   failed = expired.
 */
export class JobMetrics {
  private readonly enqueued: Counter;
  private readonly completed: Counter;
  private readonly retried: Counter;
  private readonly failed: Counter;
  private readonly discarded: Counter;
  private readonly duration: Histogram;
  private readonly wait: Histogram;
  private readonly timeouts: Counter;
  private readonly executionDuration: Histogram;
  private readonly enqueueWait: Histogram;

  constructor(meter: Meter) {
    const counter = (name: string, description: string): Counter => meter.createCounter(name, { description, unit: '{job}' });
    const histogram = (name: string, description: string, unit: string, boundaries: readonly number[]): Histogram =>
      meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: [...boundaries] } });
    this.enqueued = counter(METRIC.jobsEnqueued, 'Jobs enqueued (accepted by this replica)');
    this.completed = counter(METRIC.jobsCompleted, 'Jobs completed');
    this.retried = counter(METRIC.jobsRetried, 'Failed attempts that will be retried');
    this.failed = counter(METRIC.jobsFailed, 'Jobs that reached terminal failure (a failed attempt discarded them)');
    this.discarded = counter(METRIC.jobsDiscarded, 'Jobs discarded: terminal failures and expiries');
    this.duration = histogram(METRIC.jobsDuration, 'Execution time of attempts that completed or failed', 'ms', BUCKETS.durationMs);
    this.wait = histogram(METRIC.jobsWait, 'Time from available to started, per attempt', 'ms', BUCKETS.waitMs);
    this.timeouts = meter.createCounter(METRIC.timeoutCount, { description: 'Jobs timed out, by timeout kind' });
    this.executionDuration = histogram(METRIC.executionDuration, 'Duration of job attempts, by outcome', 's', BUCKETS.seconds);
    this.enqueueWait = histogram(METRIC.enqueueWait, 'Time from available to first attempt', 's', BUCKETS.seconds);
  }

  /**
   * Counts and measures one transition. `eventsOf` gives the events it
   * stands for; it is only asked when the transition records an error or
   * discards the job, the only transitions the catalog derives failures,
   * expiries and timeouts from (which of them, it decides). The rest are
   * told by their states alone (into active: job.started; into completed:
   * job.completed), which keeps deriving events off the hot path.
   */
  record(t: JobTransition, eventsOf: () => readonly EventDraft[]): void {
    const labels: Labels = { queue: t.queue, job_type: t.jobType };
    if (t.from === 'none') this.enqueued.add(1, labels);
    if (t.to === 'active') this.started(t, labels);
    else if (t.to === 'completed') {
      this.completed.add(1, labels);
      this.recordDuration(t, labels);
    }
    if (t.error !== undefined || t.to === 'discarded') for (const event of eventsOf()) this.outcome(t, event, labels);
    this.attemptEnded(t);
  }

  private outcome(t: JobTransition, event: EventDraft, labels: Labels): void {
    const timeoutKind = timeoutKindOf(event.type);
    if (timeoutKind !== undefined) this.timeouts.add(1, { timeout_kind: timeoutKind, ...labels });
    if (event.type === 'job.failed') this.recordDuration(t, labels);
    else if (event.type === 'job.retrying') this.retried.add(1, labels);
    else if (event.type === 'job.discarded') this.failed.add(1, labels);
    if (event.type === 'job.discarded' || event.type === 'job.expired') this.discarded.add(1, labels);
  }

  /** ojs.jobs.duration_ms, recorded on job.completed and job.failed (ojs-events 7.4). */
  private recordDuration(t: JobTransition, labels: Labels): void {
    if (t.startedAt !== undefined) this.duration.record(Math.max(0, t.at - t.startedAt), labels);
  }

  /** Every attempt's wait feeds ojs.jobs.wait_ms; only first attempts feed timeouts.md's wait_time (per queue). */
  private started(t: JobTransition, labels: Labels): void {
    if (t.startedAt === undefined || t.enqueuedAt === undefined) return;
    const waitMs = Math.max(0, t.startedAt - t.enqueuedAt);
    this.wait.record(waitMs, labels);
    if (t.attempt === 1) this.enqueueWait.record(waitMs / 1000, { queue: t.queue });
  }

  /**
   * An attempt that ended (settled, failed, reclaimed or cancelled; not a
   * delivery given back undelivered) feeds timeouts.md's execution duration,
   * by outcome: completed, cancelled, or the error type.
   */
  private attemptEnded(t: JobTransition): void {
    if (t.from !== 'active' || t.startedAt === undefined || (t.to === 'available' && t.error === undefined)) return;
    const outcome = t.to === 'completed' || t.to === 'cancelled' ? t.to : (t.error?.type ?? 'failed');
    this.executionDuration.record(Math.max(0, t.at - t.startedAt) / 1000, { queue: t.queue, job_type: t.jobType, outcome });
  }
}
