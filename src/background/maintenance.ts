import type { Application } from '../app/application';
import { BackgroundLoop } from './background-loop';
import { DueLoop } from './due-loop';

export interface MaintenanceIntervals {
  /**
   * The longest the promotion pass sleeps: scheduled and retryable jobs are
   * promoted when they fall due, and this bounds how late one is found
   * whose announcement was lost.
   */
  promoteIntervalMs: number;
  /** How often timeouts, expired leases and dead workers are looked for. */
  reapIntervalMs: number;
  /** The longest the schedule pass sleeps (default {@link SCHEDULE_INTERVAL_MS}). */
  scheduleIntervalMs?: number;
}

/**
 * The longest the schedule pass sleeps by default. The pass runs when the
 * earliest tick falls due, which the store reports and announces (a
 * registered or resumed schedule whose tick comes first), so each
 * schedule is evaluated once per tick (ojs-cron 7.3 asks for no evaluation
 * more often than once a second). This bounds how late a tick whose
 * announcement was lost fires; two ticks of a schedule that pass while it
 * waits fire once (the catch-up rule fires only the latest).
 */
export const SCHEDULE_INTERVAL_MS = 1_000;

/**
 * The least time between two promotion passes, and between two schedule
 * passes: a steady stream of retries, each due at its own millisecond,
 * costs a replica at most one pass per spacing (as the fixed intervals
 * these passes once ran at did), and a lone due job waits at most that.
 */
const PROMOTE_SPACING_MS = 100;
const SCHEDULE_SPACING_MS = 250;

/**
 * The server's background work. Every task is safe to run on every replica
 * at once; with a shared store, any replica can die without stopping it.
 */
export class Maintenance {
  readonly promoteDue: DueLoop;
  readonly expireWaiting: BackgroundLoop;
  readonly signalSoftTimeouts: BackgroundLoop;
  readonly reclaimExpiredLeases: BackgroundLoop;
  readonly removeDeadWorkers: BackgroundLoop;
  readonly pruneTerminal: BackgroundLoop;
  readonly pruneEvents: BackgroundLoop;
  readonly fireSchedules: DueLoop;
  /** Stop hearing of due times (set while started). */
  private unsubscribe: (() => void)[] = [];

  constructor(
    private readonly app: Application,
    intervals: MaintenanceIntervals,
  ) {
    const { logger, clock } = app.context;
    const loop = (name: string, intervalMs: number, runOnce: () => Promise<number>): BackgroundLoop =>
      new BackgroundLoop({ name, intervalMs, jitter: 0.1, runOnce, logger });
    // A spacing never longer than the idle bound a test or an operator set.
    const dueLoop = (name: string, idleMs: number, spacingMs: number, runOnce: () => Promise<{ nextDueAt: number | undefined }>): DueLoop =>
      new DueLoop({
        name,
        idleMs,
        minSpacingMs: Math.min(spacingMs, idleMs),
        clock,
        runOnce: async () => (await runOnce()).nextDueAt,
        logger,
      });
    this.promoteDue = dueLoop('promote-due', intervals.promoteIntervalMs, PROMOTE_SPACING_MS, () => app.recovery.promoteDue());
    this.fireSchedules = dueLoop('fire-schedules', intervals.scheduleIntervalMs ?? SCHEDULE_INTERVAL_MS, SCHEDULE_SPACING_MS, () =>
      app.schedules.fireDue(),
    );
    this.expireWaiting = loop('expire-waiting', intervals.reapIntervalMs, () => app.recovery.expireWaiting());
    this.signalSoftTimeouts = loop('soft-timeouts', intervals.reapIntervalMs, () => app.recovery.signalSoftTimeouts());
    this.reclaimExpiredLeases = loop('reclaim-leases', intervals.reapIntervalMs, () => app.recovery.reclaimExpiredLeases());
    this.removeDeadWorkers = loop('remove-dead-workers', intervals.reapIntervalMs, () => app.recovery.removeDeadWorkers());
    this.pruneTerminal = loop('prune-terminal', intervals.reapIntervalMs, () => app.recovery.pruneTerminal());
    this.pruneEvents = loop('prune-events', intervals.reapIntervalMs, () => app.recovery.pruneEvents());
  }

  /**
   * Dead workers come before lease reclaiming: the jobs of a worker that
   * stopped beating count as failed attempts (worker_death), which a poison
   * job that kills its worker must not escape by looking undelivered. Soft
   * timeouts come before reclaims, so a worker hears of a timeout before its
   * job is taken away.
   */
  private get loops(): (BackgroundLoop | DueLoop)[] {
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
    // A job or a tick now due sooner than any other runs its pass then (a store back from an outage: at once).
    if (this.unsubscribe.length === 0) {
      this.unsubscribe = [
        this.app.recovery.watchDue((at) => this.promoteDue.dueAt(at)),
        this.app.schedules.watchTicks((at) => this.fireSchedules.dueAt(at)),
      ];
    }
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }

  /** Runs every task once, in order; for tests that drive time by hand. */
  async runOnce(): Promise<void> {
    for (const loop of this.loops) await loop.runOnce();
  }
}
