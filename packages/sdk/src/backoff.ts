/**
 * Reconnection delays: exponential growth with full jitter, so that a fleet
 * of workers that lost the same server does not come back in lockstep.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 100,
    private readonly capMs = 5_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next try: uniform in [base/2, min(cap, base * 2^attempt)]. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    const floor = this.baseMs / 2;
    return floor + this.random() * Math.max(0, ceiling - floor);
  }

  /** After a success, start again from the base delay. */
  reset(): void {
    this.attempt = 0;
  }
}
