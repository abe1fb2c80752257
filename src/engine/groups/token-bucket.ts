// A token bucket of `count` tokens refilled continuously over `perMs` (at
// most `count` held): the contract's `rate` bound on a topic or a group. Time
// comes in as nowMs, so a test drives it with a manual clock. It is kept as
// one instant, not a level and a timer (the generic cell rate algorithm's
// "theoretical arrival time"): `fullAt` is when the bucket would be full
// again, each take moves it on by perMs / count, and the level and the next
// token's instant are read from it. Nothing accumulates on a read, so a
// bucket read often still names its next token to the exact ms, and an idle
// bucket costs nothing. The instant is kept relative to the bucket's own
// origin (an epoch instant of about 1.7e12 ms resolves only to 0.0002 ms
// as a double, a token's worth of error at a fast rate).

/** Float slack: a level this close under a whole token still counts as one (sums of perMs / count are not exact). */
const slack = 1e-7;

export class TokenBucket {
  /** Where fullAt is counted from: the instant the bucket was made. */
  private readonly originMs: number;
  /** When the bucket is full again, from originMs (at or before now: full). */
  private fullAt: number;

  constructor(
    readonly count: number,
    readonly perMs: number,
    nowMs: number,
  ) {
    this.originMs = nowMs;
    this.fullAt = 0;
  }

  /** The time one token takes to come back. */
  private get tokenMs(): number {
    return this.perMs / this.count;
  }

  /** Tokens held at nowMs (fractional while refilling). */
  level(nowMs: number): number {
    const missingMs = this.fullAt - (nowMs - this.originMs);
    return missingMs <= 0 ? this.count : this.count - missingMs / this.tokenMs;
  }

  /** Whether a whole token is there to take at nowMs. */
  canTake(nowMs: number): boolean {
    return this.level(nowMs) >= 1 - slack;
  }

  /** Take one token (the caller checked canTake). */
  take(nowMs: number): void {
    this.fullAt = Math.max(this.fullAt, nowMs - this.originMs) + this.tokenMs;
  }

  /** When the next whole token is there (nowMs when one is already). */
  nextAtMs(nowMs: number): number {
    if (this.canTake(nowMs)) return nowMs;
    // The level reaches 1 once fullAt is (count - 1) tokens away; never now, which canTake just refused.
    const at = this.fullAt - (this.count - 1) * this.tokenMs;
    return Math.max(nowMs + 1, this.originMs + Math.ceil(at - slack * this.tokenMs));
  }

  /** Whether the bucket is full at nowMs (forgetting it then loses nothing). */
  full(nowMs: number): boolean {
    return this.fullAt <= nowMs - this.originMs;
  }

  /** A bucket that was empty at `emptyAtMs` and has refilled since (a bound read back at a restart: never a fresh burst). */
  static emptiedAt(count: number, perMs: number, emptyAtMs: number): TokenBucket {
    const bucket = new TokenBucket(count, perMs, emptyAtMs);
    bucket.fullAt = perMs;
    return bucket;
  }

  /** The same bucket under a new count and period, keeping its tokens (capped at the new count). */
  resized(count: number, perMs: number, nowMs: number): TokenBucket {
    const bucket = new TokenBucket(count, perMs, nowMs);
    // A full bucket stays full (as a dropped full one, made again, would be); another keeps its tokens.
    if (this.full(nowMs)) return bucket;
    const level = Math.min(count, this.level(nowMs));
    bucket.fullAt = (count - level) * (perMs / count);
    return bucket;
  }
}
