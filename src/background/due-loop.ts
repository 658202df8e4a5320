import { performance } from 'node:perf_hooks';
import type { Logger } from '../app/ports';
import type { Clock } from '../domain/clock';

export interface DueLoopOptions {
  name: string;
  /** The longest it sleeps: how late a due time whose announcement was lost is found. */
  idleMs: number;
  /**
   * The least time from one run's start to the next one's, in real time (a
   * pace, not a deadline: the injected clock does not drive it). Things
   * that fall due closer together than this are handled together, so a
   * steady stream of due times costs at most one run per spacing.
   */
  minSpacingMs: number;
  clock: Clock;
  /** Runs the task once; returns when it is next due (undefined: nothing waits). */
  runOnce: () => Promise<number | undefined>;
  logger: Logger;
}

/**
 * A task that runs when something it handles falls due, rather than on a
 * fixed beat: after each run it sleeps until the time the run returned,
 * on the injected clock, and `dueAt` brings the next run forward for
 * something announced as due sooner. A real timer of `idleMs` bounds the
 * sleep, so that an announcement lost on its way (a store's pub/sub
 * message during a disconnection) delays a run by at most that. Never
 * overlaps itself; a time announced during a run is kept for after it.
 * Runs come no closer than `minSpacingMs`.
 */
export class DueLoop {
  private isStarted = false;
  private running: Promise<void> | undefined;
  /** The next run's time on the clock, and the cancels of its two timers. */
  private plannedAt = Number.POSITIVE_INFINITY;
  private cancelDue: (() => void) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The earliest time announced while a run was under way. */
  private announcedAt = Number.POSITIVE_INFINITY;
  /** When the last run started (performance.now()). */
  private lastRunAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: DueLoopOptions) {}

  /** Runs the task once now (tests that drive time by hand); returns when it is next due. */
  runOnce(): Promise<number | undefined> {
    return this.options.runOnce();
  }

  start(): void {
    if (this.isStarted) return;
    this.isStarted = true;
    this.plan(this.options.clock.now());
  }

  /** Stops planning runs and waits for a run in progress to finish. */
  async stop(): Promise<void> {
    this.isStarted = false;
    this.clearTimers();
    await this.running;
  }

  /** Something falls due at `at`: the next run comes then, if that is sooner than planned. */
  dueAt(at: number): void {
    if (!this.isStarted) return;
    if (this.running !== undefined) this.announcedAt = Math.min(this.announcedAt, at);
    else if (at < this.plannedAt) this.plan(at);
  }

  private plan(at: number): void {
    this.clearTimers();
    this.plannedAt = at;
    // Beyond the idle timer's reach, the run it brings plans again (and a system timer that far would overflow).
    if (at <= this.options.clock.now() + this.options.idleMs) this.cancelDue = this.options.clock.at(at, () => this.run());
    this.idleTimer = setTimeout(() => this.run(), this.options.idleMs);
    this.idleTimer.unref();
  }

  private clearTimers(): void {
    this.cancelDue?.();
    this.cancelDue = undefined;
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.plannedAt = Number.POSITIVE_INFINITY;
  }

  private run(): void {
    this.clearTimers();
    const wait = this.lastRunAt + this.options.minSpacingMs - performance.now();
    if (wait > 0) {
      // Due now, and run once the spacing allows: an announcement meanwhile has nothing sooner to bring.
      this.plannedAt = this.options.clock.now();
      this.idleTimer = setTimeout(() => this.run(), wait);
      this.idleTimer.unref();
      return;
    }
    this.lastRunAt = performance.now();
    this.running = this.tick();
  }

  private async tick(): Promise<void> {
    let nextAt: number | undefined;
    try {
      nextAt = await this.options.runOnce();
    } catch (error) {
      this.options.logger.error({ err: error, loop: this.options.name }, 'background task failed; retrying after the idle interval');
    }
    this.running = undefined;
    const announced = this.announcedAt;
    this.announcedAt = Number.POSITIVE_INFINITY;
    if (this.isStarted) this.plan(Math.min(nextAt ?? Number.POSITIVE_INFINITY, announced));
  }
}
