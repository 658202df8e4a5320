/** What a TokenBucket answers: admitted, or the milliseconds until the same request would be. */
export type TokenBucketAnswer = { isAdmitted: true } | { isAdmitted: false; retryAfterMs: number };

/**
 * A token bucket: `ratePerSecond` tokens a second flow in, up to `burst`
 * held. It starts full. Time comes in as milliseconds from the caller's
 * clock, so the bucket is deterministic under a test clock.
 *
 * A request for more tokens than the burst could never be admitted if it
 * needed them all at once; it is admitted when the bucket is full and
 * leaves it in debt instead, so the long-run rate still holds (the
 * debt is paid before anything else is admitted).
 */
export class TokenBucket {
  private tokens: number;
  private updatedAtMs: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.updatedAtMs = nowMs;
  }

  /** Takes `count` tokens when enough are held (see above for counts over the burst). */
  take(count: number, nowMs: number): TokenBucketAnswer {
    // A clock that steps back (a wall clock set back) adds nothing rather than taking tokens away.
    const elapsedMs = Math.max(0, nowMs - this.updatedAtMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs * this.ratePerSecond) / 1_000);
    this.updatedAtMs = Math.max(this.updatedAtMs, nowMs);
    const needed = Math.min(count, this.burst);
    if (this.tokens >= needed) {
      this.tokens -= count;
      return { isAdmitted: true };
    }
    return { isAdmitted: false, retryAfterMs: Math.ceil(((needed - this.tokens) * 1_000) / this.ratePerSecond) };
  }
}
