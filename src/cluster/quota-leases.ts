// Cluster-wide namespace quotas by token leasing (docs/CLUSTER.md, "Quotas
// across nodes"). Each namespace with a quota has one bucket in PostgreSQL,
// refilled by the database's clock (storage/postgres/quota-rows.ts); each
// node holds a LeasedBucket per such namespace, the engine's QuotaBucket,
// that never refills by itself: it admits enqueues from the tokens this node
// drew, so the cluster never admits more than the database granted.
//
// A node draws every quotaDrawPeriodMs (period()) enough to hold its target:
// quotaDrawUseFactor times its use over the last period, at least a floor of
// one period's refill, and at least the largest batch refused lately; what it
// holds above the target it hands back. It also draws at once when an
// enqueue finds too few tokens, which is then answered RATE_LIMITED (the
// engine admits synchronously: it cannot wait for the draw), with a short
// hint when the database's bucket had enough at the last draw, else the time
// the bucket needs to refill the shortfall plus a period. At most one draw of
// a namespace is in flight; one unanswered after quotaDrawTimeoutMs is given
// up (its answer, if it comes, is ignored: tokens lost, never counted twice).
// Tokens handed back leave the local bucket before the statement is sent, so
// a failure loses them rather than doubling them. While the last draw failed
// (the database is out of reach), an enqueue beyond the tokens held is
// answered UNAVAILABLE. The buckets belong to the node, not to its engine,
// so they survive the rebuild a shard move causes.

import type { QuotaBucket, QuotaBuckets, QuotaVerdict } from "../engine/admission/quota.ts";
import { refillWaitMs } from "../engine/admission/quota.ts";
import type { Clock } from "../lib/clock.ts";
import { clusterLimits } from "../limits.ts";
import type { QuotaDraw, QuotaGrant } from "../storage/postgres/quota-rows.ts";

export type DrawQuota = (draw: QuotaDraw) => Promise<QuotaGrant>;

const { quotaDrawPeriodMs, quotaDrawUseFactor, quotaDrawRetryAfterMs, quotaDrawTimeoutMs, quotaUnreachableRetryAfterMs } = clusterLimits;

export class LeasedBucket implements QuotaBucket {
  /** Tokens drawn and not used: only draws add to them. */
  private tokens = 0;
  /** Taken in this period so far, and in the last whole one. */
  private used = 0;
  private usedLastPeriod = 0;
  /** The largest batch refused lately, and when: draws cover it until its client has had time to come back. */
  private refused = 0;
  private refusedAtMs = 0;
  /** The draw in flight: its number (later answers to an earlier number are ignored) and when it went (null: none). */
  private drawSeq = 0;
  private drawSentMs: number | null = null;
  /** The database bucket's tokens after the last answered draw, and when (this node's clock; for hints only). */
  private dbLeft = 0;
  private dbLeftAtMs = 0;
  /** Why the last draw failed (null: it did not). */
  private failure: string | null = null;
  /** Tokens an idle node keeps at hand: one period's refill, at least one. */
  readonly floor: number;

  constructor(
    readonly ns: string,
    readonly perMinute: number,
    private readonly drawQuota: DrawQuota,
    private readonly clock: Clock,
  ) {
    this.floor = Math.min(perMinute, Math.max(1, Math.ceil((perMinute * quotaDrawPeriodMs) / 60_000)));
  }

  /** Tokens this node holds (drawn, not used). */
  available(_nowMs: number): number {
    return this.tokens;
  }

  /** Whether a draw is under way. */
  get drawing(): boolean {
    return this.drawSentMs !== null;
  }

  take(count: number, nowMs: number): QuotaVerdict {
    if (count > this.perMinute) return { ok: false, refusal: "too_large", retryAfterMs: 0 };
    if (this.tokens >= count) {
      this.tokens -= count;
      this.used += count;
      if (count >= this.refused) this.refused = 0;
      return { ok: true };
    }
    if (count >= this.refused) {
      this.refused = count;
      this.refusedAtMs = nowMs;
    }
    const failure = this.failure;
    void this.draw(nowMs);
    if (failure !== null) {
      return { ok: false, refusal: "unavailable", retryAfterMs: quotaUnreachableRetryAfterMs, message: `namespace quota tokens cannot be drawn: ${failure}` };
    }
    return { ok: false, refusal: "rate_limited", retryAfterMs: this.hintMs(count - this.tokens, nowMs) };
  }

  /** Every period: give up a draw unanswered too long, close the period's use, and draw or hand back toward the target. */
  period(nowMs: number): Promise<void> {
    if (this.drawSentMs !== null && nowMs - this.drawSentMs >= quotaDrawTimeoutMs) {
      this.drawSeq++;
      this.drawSentMs = null;
      this.failure = `no answer from the database in ${quotaDrawTimeoutMs} ms`;
    }
    this.usedLastPeriod = this.used;
    this.used = 0;
    return this.draw(nowMs);
  }

  /** Hand every token held back to the database (a node leaving the cluster). */
  returnAll(nowMs: number): Promise<void> {
    this.refused = 0;
    this.usedLastPeriod = 0;
    this.used = 0;
    return this.send(-this.tokens, nowMs, true);
  }

  /** Tokens this node means to hold now. */
  private target(nowMs: number): number {
    const use = Math.max(this.used, this.usedLastPeriod) * quotaDrawUseFactor;
    if (this.refused > 0 && nowMs - this.refusedAtMs > refillWaitMs(this.refused, this.perMinute) + 2 * quotaDrawPeriodMs) this.refused = 0;
    return Math.min(this.perMinute, Math.max(this.floor, use, this.refused));
  }

  /** Draw toward the target (or hand back what is above it), unless a draw is in flight or nothing is needed. */
  private draw(nowMs: number): Promise<void> {
    return this.send(this.target(nowMs) - this.tokens, nowMs, false);
  }

  private send(want: number, nowMs: number, always: boolean): Promise<void> {
    if (want === 0 || (this.drawSentMs !== null && !always)) return Promise.resolve();
    // Handed back before the statement goes: if it fails, they are lost, not counted twice.
    if (want < 0) this.tokens += want;
    const seq = ++this.drawSeq;
    this.drawSentMs = nowMs;
    return this.drawQuota({ ns: this.ns, perMinute: this.perMinute, want }).then(
      (grant) => {
        if (seq !== this.drawSeq) return;
        this.drawSentMs = null;
        this.failure = null;
        if (grant.granted > 0) this.tokens += grant.granted;
        this.dbLeft = grant.left;
        this.dbLeftAtMs = this.clock.nowMs();
      },
      (error: unknown) => {
        if (seq !== this.drawSeq) return;
        this.drawSentMs = null;
        this.failure = (error as Error).message;
      },
    );
  }

  /**
   * When `missing` more tokens may be here: soon when the database's bucket
   * (as last seen, refilled since by this node's clock) has them, else when
   * it will have refilled them, plus the period in which a draw fetches them.
   */
  private hintMs(missing: number, nowMs: number): number {
    const elapsedMs = Math.max(0, nowMs - this.dbLeftAtMs);
    const inDatabase = Math.min(this.perMinute, this.dbLeft + (elapsedMs * this.perMinute) / 60_000);
    if (inDatabase >= missing) return quotaDrawRetryAfterMs;
    return refillWaitMs(missing - inDatabase, this.perMinute) + quotaDrawPeriodMs;
  }
}

/** The node's leased buckets, one per namespace with a quota, kept across engine rebuilds. */
export class QuotaLeases {
  private readonly buckets = new Map<string, LeasedBucket>();

  constructor(namespaces: Record<string, { enqueuePerMinute: number | null }>, drawQuota: DrawQuota, clock: Clock) {
    for (const [ns, quota] of Object.entries(namespaces)) {
      if (quota.enqueuePerMinute !== null) this.buckets.set(ns, new LeasedBucket(ns, quota.enqueuePerMinute, drawQuota, clock));
    }
  }

  /** What the engine asks for a namespace it meets: the same bucket every time, whichever engine asks. */
  readonly quotaBuckets: QuotaBuckets = (ns) => this.buckets.get(ns) ?? null;

  get size(): number {
    return this.buckets.size;
  }

  /** One period of every bucket; resolves when their draws are answered. */
  async period(nowMs: number): Promise<void> {
    await Promise.all([...this.buckets.values()].map((bucket) => bucket.period(nowMs)));
  }

  /** Hand every held token back (SIGTERM handover); resolves when the returns are answered or failed. */
  async returnAll(nowMs: number): Promise<void> {
    await Promise.all([...this.buckets.values()].map((bucket) => bucket.returnAll(nowMs)));
  }
}
