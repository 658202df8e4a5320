import { hasQueueLimits, rateWindow, type QueueLimits } from '../../domain/queue-limits';

/**
 * The queues' fleet-wide limits and, per queue with a rate, its sliding log
 * of recent starts (domain queue-limits.ts). A log holds the starts of the
 * last window only, trimmed as claims read it, and at most the rate's limit
 * of them once trimmed; it goes with the queue's rate.
 */
export class QueueLimiter {
  private readonly limits = new Map<string, QueueLimits>();
  private readonly starts = new Map<string, number[]>();

  limitsOf(queue: string): QueueLimits | undefined {
    return this.limits.get(queue);
  }

  /** Sets (or, with nothing set, clears) a queue's limits. */
  set(queue: string, limits: QueueLimits | undefined): void {
    if (limits === undefined || !hasQueueLimits(limits)) this.limits.delete(queue);
    else this.limits.set(queue, limits);
    if (limits?.rate === undefined) this.starts.delete(queue);
  }

  /**
   * How many of the queue's jobs may start at `now` with `active` of them
   * active (Infinity without limits), and, when its rate window is what
   * holds them back, when its next slot opens.
   */
  allowance(queue: string, active: number, now: number): { slots: number; opensAt?: number } {
    const limits = this.limits.get(queue);
    if (limits === undefined) return { slots: Number.POSITIVE_INFINITY };
    const byActive = limits.maxActive === undefined ? Number.POSITIVE_INFINITY : Math.max(0, limits.maxActive - active);
    if (limits.rate === undefined) return { slots: byActive };
    const log = this.trimmed(queue, now - limits.rate.periodMs);
    const window = rateWindow(log, limits.rate, now);
    return window.slots <= byActive ? window : { slots: byActive };
  }

  /** The newest start logged for any of `queues`. */
  newestStart(queues: readonly string[]): number | undefined {
    const newest = queues.map((queue) => this.starts.get(queue)?.at(-1)).filter((at) => at !== undefined);
    return newest.length === 0 ? undefined : Math.max(...newest);
  }

  /** Logs a start of one of the queue's jobs, if the queue has a rate. */
  started(queue: string, at: number): void {
    if (this.limits.get(queue)?.rate === undefined) return;
    const log = this.starts.get(queue);
    if (log === undefined) this.starts.set(queue, [at]);
    else log.push(at);
  }

  /** Problems of the logs: for the audit. */
  problems(): string[] {
    const problems: string[] = [];
    for (const [queue, log] of this.starts) {
      const rate = this.limits.get(queue)?.rate;
      if (rate === undefined) problems.push(`queue ${queue} keeps a start log but has no rate`);
      if (log.some((at, i) => i > 0 && at < log[i - 1]!)) problems.push(`queue ${queue}'s start log is out of order`);
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
