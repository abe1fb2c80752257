// A namespace's enqueue quota as the engine sees it: a QuotaBucket that
// admits `count` items now or refuses with a hint. On a single node it is a
// TokenBucket: it counts items, holds up to one minute's worth, and refills
// continuously from the nowMs it is handed. In cluster mode it is a leased
// bucket (cluster/quota-leases.ts) that never refills by itself: the node
// tops it up with tokens drawn from the namespace's bucket in PostgreSQL, and
// it outlives the engine, which is rebuilt when shards move.

/** Why a take was refused: the batch can never fit, the quota is spent for now, or the quota's store cannot be reached. */
export type QuotaRefusal = "too_large" | "rate_limited" | "unavailable";

export type QuotaVerdict = { ok: true } | { ok: false; refusal: QuotaRefusal; retryAfterMs: number; message?: string };

export interface QuotaBucket {
  /** Items per minute, and the most the bucket holds (a batch above it is refused as too large). */
  readonly perMinute: number;
  /** Tokens this bucket can hand out now. */
  available(nowMs: number): number;
  /** Take `count` tokens, or say why not and when to try again. */
  take(count: number, nowMs: number): QuotaVerdict;
}

/** Hands a namespace its bucket when the engine first meets it (null: the namespace has no quota). */
export type QuotaBuckets = (ns: string, nowMs: number) => QuotaBucket | null;

/** The single node's quotas: a full TokenBucket per namespace with `enqueuePerMinute` set. */
export function localBuckets(namespaces: Record<string, { enqueuePerMinute: number | null }>): QuotaBuckets {
  return (ns, nowMs) => {
    const perMinute = namespaces[ns]?.enqueuePerMinute ?? null;
    return perMinute === null ? null : new TokenBucket(perMinute, nowMs);
  };
}

class TokenBucket implements QuotaBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    readonly perMinute: number,
    nowMs: number,
  ) {
    this.tokens = perMinute;
    this.lastMs = nowMs;
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
    if (count > this.perMinute) return { ok: false, refusal: "too_large", retryAfterMs: 0 };
    const have = this.available(nowMs);
    if (have >= count) {
      this.tokens = have - count;
      return { ok: true };
    }
    return { ok: false, refusal: "rate_limited", retryAfterMs: refillWaitMs(count - have, this.perMinute) };
  }
}

/** Milliseconds for `missing` tokens to refill at `perMinute` (at least 1). */
export function refillWaitMs(missing: number, perMinute: number): number {
  // The small epsilon absorbs floating-point residue from continuous refill (0.999 + 0.001 tokens).
  return Math.max(1, Math.ceil((missing * 60_000) / perMinute - 1e-6));
}
