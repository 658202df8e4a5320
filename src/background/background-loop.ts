import type { Logger } from '../app/ports';

export interface BackgroundLoopOptions {
  name: string;
  intervalMs: number;
  /** Fraction of the interval added or removed at random, so replicas do not run in lockstep. */
  jitter: number;
  runOnce: () => Promise<number>;
  logger: Logger;
}

/**
 * A periodic task that never overlaps itself: the next run is scheduled only
 * after the previous one finished (a setTimeout chain, not setInterval).
 * Tests call `runOnce` directly instead of waiting for the timer.
 */
export class BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private isStarted = false;

  constructor(private readonly options: BackgroundLoopOptions) {}

  /** Runs the task once now; returns how many things it did. */
  runOnce(): Promise<number> {
    return this.options.runOnce();
  }

  start(): void {
    if (this.isStarted) return;
    this.isStarted = true;
    this.schedule();
  }

  /** Stops scheduling and waits for a run in progress to finish. */
  async stop(): Promise<void> {
    this.isStarted = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    const { intervalMs, jitter } = this.options;
    const delay = intervalMs * (1 + jitter * (Math.random() * 2 - 1));
    this.timer = setTimeout(() => {
      this.running = this.tick();
    }, delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      await this.options.runOnce();
    } catch (error) {
      this.options.logger.error({ err: error, loop: this.options.name }, 'background task failed; retrying next interval');
    }
    this.running = undefined;
    if (this.isStarted) this.schedule();
  }
}
