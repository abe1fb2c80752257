// A token bucket of `count` tokens refilled continuously over `perMs` (at
// most `count` held): the contract's `rate` bound on a topic or a group. Time
// comes in as nowMs, so a test drives it with a manual clock. Tokens are kept
// as a number and a refill instant rather than a timer: a bucket costs
// nothing while nobody takes from it.

export class TokenBucket {
  private tokens: number;
  private atMs: number;

  constructor(
    readonly count: number,
    readonly perMs: number,
    nowMs: number,
  ) {
    this.tokens = count;
    this.atMs = nowMs;
  }

  /** Tokens held at nowMs (fractional while refilling). */
  level(nowMs: number): number {
    if (nowMs > this.atMs) {
      this.tokens = Math.min(this.count, this.tokens + ((nowMs - this.atMs) * this.count) / this.perMs);
      this.atMs = nowMs;
    }
    return this.tokens;
  }

  /** Whether a whole token is there to take at nowMs. */
  canTake(nowMs: number): boolean {
    // A hair under 1 counts: the refill deadline is rounded up to a whole ms, and float sums may fall short of it by an ulp.
    return this.level(nowMs) >= 1 - 1e-9;
  }

  /** Take one token (the caller checked canTake). */
  take(nowMs: number): void {
    this.tokens = this.level(nowMs) - 1;
  }

  /** When the next whole token is there (nowMs when one is already). */
  nextAtMs(nowMs: number): number {
    const missing = 1 - this.level(nowMs);
    if (missing <= 1e-9) return nowMs;
    return nowMs + Math.ceil((missing * this.perMs) / this.count);
  }

  /** Whether the bucket is full at nowMs (forgetting it then loses nothing). */
  full(nowMs: number): boolean {
    return this.level(nowMs) >= this.count;
  }

  /** The same bucket under a new count and period, keeping its tokens (capped at the new count). */
  resized(count: number, perMs: number, nowMs: number): TokenBucket {
    const bucket = new TokenBucket(count, perMs, nowMs);
    bucket.tokens = Math.min(count, this.level(nowMs));
    return bucket;
  }
}
