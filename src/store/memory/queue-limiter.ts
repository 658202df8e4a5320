import type { RateLimitFact } from '../../domain/event-facts';
import { hasQueueLimits, rateWindow, type QueueLimits } from '../../domain/queue-limits';
import { limitHold, sampleHold, type LimitEventSampling, type LimitHold } from '../../domain/rate-limit-events';

/**
 * The queues' fleet-wide limits and, per queue with a rate, its sliding log
 * of recent starts (domain queue-limits.ts). A log holds the starts of the
 * last window only, trimmed as claims read it, and at most the rate's limit
 * of them once trimmed; it goes with the queue's rate. Per queue with
 * limits whose jobs were held back, the sampling of its rate-limit events
 * (domain rate-limit-events.ts); it goes with the limits.
 */
export class QueueLimiter {
  private readonly limits = new Map<string, QueueLimits>();
  private readonly starts = new Map<string, number[]>();
  private readonly sampling = new Map<string, LimitEventSampling>();

  limitsOf(queue: string): QueueLimits | undefined {
    return this.limits.get(queue);
  }

  /**
   * Sets (or, with nothing set, clears) a queue's limits. Clearing them
   * ends the queue's open episode: its released fact (naming no job).
   */
  set(queue: string, limits: QueueLimits | undefined, at: number): RateLimitFact | undefined {
    if (limits?.rate === undefined) this.starts.delete(queue);
    if (limits !== undefined && hasQueueLimits(limits)) {
      this.limits.set(queue, limits);
      return undefined;
    }
    this.limits.delete(queue);
    const held = this.sampling.get(queue)?.held;
    this.sampling.delete(queue);
    return held === undefined ? undefined : { kind: 'rate_limit', at, queue, change: 'released', strategy: held };
  }

  /**
   * How many of the queue's jobs may start at `now` with `active` of them
   * active (Infinity without limits); when none may, which limit holds them
   * back, and, when it is the rate window, when its next slot opens.
   */
  allowance(queue: string, active: number, now: number): { slots: number; opensAt?: number; hold?: LimitHold } {
    const limits = this.limits.get(queue);
    if (limits === undefined) return { slots: Number.POSITIVE_INFINITY };
    const byActive = limits.maxActive === undefined ? Number.POSITIVE_INFINITY : Math.max(0, limits.maxActive - active);
    const log = limits.rate === undefined ? [] : this.trimmed(queue, now - limits.rate.periodMs);
    const window = limits.rate === undefined ? { slots: Number.POSITIVE_INFINITY } : rateWindow(log, limits.rate, now);
    const allowed = window.slots <= byActive ? window : { slots: byActive };
    if (allowed.slots > 0) return allowed;
    const hold = limitHold(limits, active, log.length);
    return hold === undefined ? allowed : { ...allowed, hold };
  }

  /** The newest start logged for any of `queues`. */
  newestStart(queues: readonly string[]): number | undefined {
    const newest = queues.map((queue) => this.starts.get(queue)?.at(-1)).filter((at) => at !== undefined);
    return newest.length === 0 ? undefined : Math.max(...newest);
  }

  /**
   * Job `jobId` of the queue starts at `at`: logs the start if the queue has
   * a rate, and ends the queue's open episode, if any: its released fact,
   * which comes before the job's own.
   */
  started(queue: string, at: number, jobId: string): RateLimitFact | undefined {
    const limits = this.limits.get(queue);
    if (limits === undefined) return undefined;
    if (limits.rate !== undefined) {
      const log = this.starts.get(queue);
      if (log === undefined) this.starts.set(queue, [at]);
      else log.push(at);
    }
    const sampling = this.sampling.get(queue);
    if (sampling?.held === undefined) return undefined;
    this.sampling.set(queue, { quietUntil: sampling.quietUntil });
    return { kind: 'rate_limit', at, queue, change: 'released', strategy: sampling.held, jobId };
  }

  /**
   * A claim that wanted more of the queue's jobs, while some were
   * available, was held back by `hold` at `now`: the exceeded fact, when
   * this hold is the one of its window that is told.
   */
  heldBack(queue: string, hold: LimitHold, now: number): RateLimitFact | undefined {
    const limits = this.limits.get(queue);
    const next = limits === undefined ? undefined : sampleHold(this.sampling.get(queue), hold, limits, now);
    if (next === undefined) return undefined;
    this.sampling.set(queue, next);
    return { kind: 'rate_limit', at: now, queue, change: 'exceeded', ...hold };
  }

  /** Problems of the logs and the sampling: for the audit. */
  problems(): string[] {
    const problems: string[] = [];
    for (const [queue, log] of this.starts) {
      const rate = this.limits.get(queue)?.rate;
      if (rate === undefined) problems.push(`queue ${queue} keeps a start log but has no rate`);
      if (log.some((at, i) => i > 0 && at < log[i - 1]!)) problems.push(`queue ${queue}'s start log is out of order`);
    }
    for (const queue of this.sampling.keys()) {
      if (!this.limits.has(queue)) problems.push(`queue ${queue} keeps rate-limit event sampling but has no limits`);
    }
    return problems;
  }

  /** The queue's log without the starts at or before `cutoff` (they left the window). */
  private trimmed(queue: string, cutoff: number): number[] {
    const log = this.starts.get(queue) ?? [];
    const kept = log.findIndex((at) => at > cutoff);
    const trimmed = kept === -1 ? [] : kept === 0 ? log : log.slice(kept);
    if (trimmed !== log) this.starts.set(queue, trimmed);
    return trimmed;
  }
}
