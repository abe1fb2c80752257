// A namespace's enqueue quota: a token bucket that counts items, holds up to
// one minute's worth, and refills continuously from the nowMs it is handed.
// In cluster mode a node's bucket holds its share of the quota, resized when
// nodes join or leave (cluster/cluster-node.ts).

export type QuotaVerdict = { ok: true } | { ok: false; tooLarge: boolean; retryAfterMs: number };

export class TokenBucket {
  private tokens: number;
  private lastMs: number;
  private capacity: number;

  constructor(perMinute: number, nowMs: number) {
    this.capacity = perMinute;
    this.tokens = perMinute;
    this.lastMs = nowMs;
  }

  /** Items per minute, and the most the bucket holds. */
  get perMinute(): number {
    return this.capacity;
  }

  /** A new rate and capacity from now on: the time so far refills at the old rate; tokens above the new capacity go. */
  resize(perMinute: number, nowMs: number): void {
    this.available(nowMs);
    this.capacity = perMinute;
    this.tokens = Math.min(this.tokens, perMinute);
  }

  /** Tokens available now (refilled up to capacity). */
  available(nowMs: number): number {
    if (nowMs > this.lastMs) {
      this.tokens = Math.min(this.perMinute, this.tokens + ((nowMs - this.lastMs) * this.perMinute) / 60_000);
      this.lastMs = nowMs;
    }
    return this.tokens;
  }

  /** Take `count` tokens, or say when enough will be there (never, for a count above capacity). */
  take(count: number, nowMs: number): QuotaVerdict {
    if (count > this.perMinute) return { ok: false, tooLarge: true, retryAfterMs: 0 };
    const have = this.available(nowMs);
    if (have >= count) {
      this.tokens = have - count;
      return { ok: true };
    }
    // The small epsilon absorbs floating-point residue from continuous refill (0.999 + 0.001 tokens).
    const retryAfterMs = Math.max(1, Math.ceil(((count - have) * 60_000) / this.perMinute - 1e-6));
    return { ok: false, tooLarge: false, retryAfterMs };
  }
}
