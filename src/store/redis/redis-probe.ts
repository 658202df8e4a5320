export interface RedisProbeOptions {
  /** Time between the end of one probe and the start of the next. */
  intervalMs: number;
  /** How long Redis has to answer before it counts as not answering. */
  timeoutMs: number;
}

/**
 * Asks Redis, again and again, whether it answers, and reports each
 * verdict. A connection can stay open while Redis answers nothing (a
 * stopped or overloaded server): only asking tells. A probe that times out
 * is reported at once and then awaited (it ends when Redis answers or the
 * command timeout fails it), so probes never pile up on a stuck server and
 * its first answer is reported as soon as it comes.
 */
export class RedisProbe {
  private timer: NodeJS.Timeout | undefined;
  private isRunning = false;

  constructor(
    private readonly ask: () => Promise<unknown>,
    private readonly options: RedisProbeOptions,
    private readonly report: (isAnswering: boolean) => void,
  ) {}

  start(): void {
    if (this.isRunning) return;
    this.isRunning = true;
    this.schedule();
  }

  stop(): void {
    this.isRunning = false;
    clearTimeout(this.timer);
  }

  /** One probe; resolves with whether Redis answered in the end. */
  async runOnce(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const answered = this.ask().then(
      () => true,
      () => false,
    );
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.timeoutMs);
    });
    const first = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    if (first === 'timeout') {
      this.report(false);
      const late = await answered;
      this.report(late);
      return late;
    }
    this.report(first);
    return first;
  }

  private schedule(): void {
    // Jitter, so that the replicas of a deployment do not probe in step.
    const delay = this.options.intervalMs * (0.9 + Math.random() * 0.2);
    this.timer = setTimeout(() => {
      void this.runOnce().finally(() => {
        if (this.isRunning) this.schedule();
      });
    }, delay);
    // The probe alone never keeps the process alive.
    this.timer.unref();
  }
}
