import type { Application } from '../app/application';
import { BackgroundLoop } from './background-loop';

export interface MaintenanceIntervals {
  /** How often scheduled and retryable jobs are promoted. */
  promoteIntervalMs: number;
  /** How often timeouts, expired leases and dead workers are looked for. */
  reapIntervalMs: number;
  /** How often due cron schedules are fired (default {@link SCHEDULE_INTERVAL_MS}). */
  scheduleIntervalMs?: number;
}

/**
 * The default schedule pass interval. ojs-cron 7.3 asks for no evaluation
 * more often than once a second; a pass evaluates only the schedules that
 * are due (one due-index read otherwise), so each schedule is evaluated
 * once per tick however often the pass runs. Passes must come more often
 * than the finest tick (one second): two ticks falling between passes
 * would fire once (the catch-up rule fires only the latest).
 */
export const SCHEDULE_INTERVAL_MS = 250;

/**
 * The server's background work. Every task is safe to run on every replica
 * at once; with a shared store, any replica can die without stopping it.
 */
export class Maintenance {
  readonly promoteDue: BackgroundLoop;
  readonly expireWaiting: BackgroundLoop;
  readonly signalSoftTimeouts: BackgroundLoop;
  readonly reclaimExpiredLeases: BackgroundLoop;
  readonly removeDeadWorkers: BackgroundLoop;
  readonly pruneTerminal: BackgroundLoop;
  readonly pruneEvents: BackgroundLoop;
  readonly fireSchedules: BackgroundLoop;

  constructor(app: Application, intervals: MaintenanceIntervals) {
    const logger = app.context.logger;
    const loop = (name: string, intervalMs: number, runOnce: () => Promise<number>): BackgroundLoop =>
      new BackgroundLoop({ name, intervalMs, jitter: 0.1, runOnce, logger });
    this.promoteDue = loop('promote-due', intervals.promoteIntervalMs, () => app.recovery.promoteDue());
    this.expireWaiting = loop('expire-waiting', intervals.reapIntervalMs, () => app.recovery.expireWaiting());
    this.signalSoftTimeouts = loop('soft-timeouts', intervals.reapIntervalMs, () => app.recovery.signalSoftTimeouts());
    this.reclaimExpiredLeases = loop('reclaim-leases', intervals.reapIntervalMs, () => app.recovery.reclaimExpiredLeases());
    this.removeDeadWorkers = loop('remove-dead-workers', intervals.reapIntervalMs, () => app.recovery.removeDeadWorkers());
    this.pruneTerminal = loop('prune-terminal', intervals.reapIntervalMs, () => app.recovery.pruneTerminal());
    this.pruneEvents = loop('prune-events', intervals.reapIntervalMs, () => app.recovery.pruneEvents());
    this.fireSchedules = loop('fire-schedules', intervals.scheduleIntervalMs ?? SCHEDULE_INTERVAL_MS, () => app.schedules.fireDue());
  }

  /**
   * Dead workers come before lease reclaiming: the jobs of a worker that
   * stopped beating count as failed attempts (worker_death), which a poison
   * job that kills its worker must not escape by looking undelivered. Soft
   * timeouts come before reclaims, so a worker hears of a timeout before its
   * job is taken away.
   */
  private get loops(): BackgroundLoop[] {
    return [
      this.promoteDue,
      this.expireWaiting,
      this.removeDeadWorkers,
      this.signalSoftTimeouts,
      this.reclaimExpiredLeases,
      this.pruneTerminal,
      this.pruneEvents,
      this.fireSchedules,
    ];
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }

  /** Runs every task once, in order; for tests that drive time by hand. */
  async runOnce(): Promise<void> {
    for (const loop of this.loops) await loop.runOnce();
  }
}
