// A token bucket of `count` tokens refilled continuously over `perMs` (at
// most `count` held): the contract's `rate` bound on a topic or a group. Time
// comes in as nowMs, so a test drives it with a manual clock. It is kept as
// one instant, not a level and a timer (the generic cell rate algorithm's
// "theoretical arrival time"): `fullAtMs` is when the bucket would be full
// again, each take moves it on by perMs / count, and the level and the next
// token's instant are read from it. Nothing accumulates on a read, so a
// bucket read often still names its next token to the exact ms, and an idle
// bucket costs nothing.

/** Float slack: a level a hair under a whole token still counts as one (sums of perMs / count are not exact). */
const slack = 1e-9;

export class TokenBucket {
  /** When the bucket is full again (at or before now: full). */
  private fullAtMs: number;

  constructor(
    readonly count: number,
    readonly perMs: number,
    nowMs: number,
  ) {
    this.fullAtMs = nowMs;
  }

  /** The time one token takes to come back. */
  private get tokenMs(): number {
    return this.perMs / this.count;
  }

  /** Tokens held at nowMs (fractional while refilling). */
  level(nowMs: number): number {
    const missingMs = this.fullAtMs - nowMs;
    return missingMs <= 0 ? this.count : this.count - missingMs / this.tokenMs;
  }

  /** Whether a whole token is there to take at nowMs. */
  canTake(nowMs: number): boolean {
    return this.level(nowMs) >= 1 - slack;
  }

  /** Take one token (the caller checked canTake). */
  take(nowMs: number): void {
    this.fullAtMs = Math.max(this.fullAtMs, nowMs) + this.tokenMs;
  }

  /** When the next whole token is there (nowMs when one is already). */
  nextAtMs(nowMs: number): number {
    if (this.canTake(nowMs)) return nowMs;
    // The level reaches 1 once fullAtMs is (count - 1) tokens away.
    const atMs = this.fullAtMs - (this.count - 1) * this.tokenMs;
    return Math.max(nowMs, Math.ceil(atMs - slack));
  }

  /** Whether the bucket is full at nowMs (forgetting it then loses nothing). */
  full(nowMs: number): boolean {
    return this.fullAtMs <= nowMs;
  }

  /** A bucket that was empty at `emptyAtMs` and has refilled since (a bound read back at a restart: never a fresh burst). */
  static emptiedAt(count: number, perMs: number, emptyAtMs: number): TokenBucket {
    const bucket = new TokenBucket(count, perMs, emptyAtMs);
    bucket.fullAtMs = emptyAtMs + perMs;
    return bucket;
  }

  /** The same bucket under a new count and period, keeping its tokens (capped at the new count). */
  resized(count: number, perMs: number, nowMs: number): TokenBucket {
    const bucket = new TokenBucket(count, perMs, nowMs);
    const level = Math.min(count, this.level(nowMs));
    bucket.fullAtMs = nowMs + (count - level) * (perMs / count);
    return bucket;
  }
}
