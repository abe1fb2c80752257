// Cluster-wide namespace quotas by token leasing (docs/CLUSTER.md, "Quotas
// across nodes"). Each namespace with a quota has one bucket in PostgreSQL,
// refilled by the database's clock (storage/postgres/quota-rows.ts); each
// node holds a LeasedBucket per such namespace, the engine's QuotaBucket,
// that never refills by itself: it admits enqueues from the tokens this node
// drew, so the cluster never admits more than the database granted.
//
// The leasing itself is token-lease.ts's (shared with a topic's own rate,
// topic-bound-leases.ts); what it does for a namespace:
// a node draws every quotaDrawPeriodMs (period()) enough to hold its target:
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
// so they outlive every shard move.

import type { QuotaBucket, QuotaBuckets, QuotaVerdict } from "../engine/admission/quota.ts";
import { refillWaitMs } from "../engine/admission/quota.ts";
import type { Clock } from "../lib/clock.ts";
import { clusterLimits } from "../limits.ts";
import type { QuotaDraw, QuotaGrant } from "../storage/postgres/quota-rows.ts";
import { TokenLease } from "./token-lease.ts";

export type DrawQuota = (draw: QuotaDraw) => Promise<QuotaGrant>;

const { quotaDrawRetryAfterMs, quotaUnreachableRetryAfterMs } = clusterLimits;

/** A namespace's quota as the engine admits from it: a TokenLease of a minute's worth, refilled over a minute, that keeps its floor while idle. */
export class LeasedBucket extends TokenLease implements QuotaBucket {
  constructor(
    readonly ns: string,
    readonly perMinute: number,
    drawQuota: DrawQuota,
    clock: Clock,
  ) {
    super((want) => drawQuota({ ns, perMinute, want }), clock, {
      capacity: perMinute,
      perMs: 60_000,
      idleFloor: true,
      drawAfterShort: true,
      refillMs: (missing) => refillWaitMs(missing, perMinute),
    });
  }

  /** Tokens this node holds (drawn, not used). */
  available(_nowMs: number): number {
    return this.held;
  }

  take(count: number, nowMs: number): QuotaVerdict {
    if (count > this.perMinute) return { ok: false, refusal: "too_large", retryAfterMs: 0 };
    const heldBefore = this.held;
    if (this.tryTake(count, nowMs)) return { ok: true };
    const failure = this.failure;
    if (failure !== null) {
      return { ok: false, refusal: "unavailable", retryAfterMs: quotaUnreachableRetryAfterMs, message: `namespace quota tokens cannot be drawn: ${failure}` };
    }
    return { ok: false, refusal: "rate_limited", retryAfterMs: this.hintMs(count - heldBefore, nowMs, quotaDrawRetryAfterMs) };
  }
}

/** The node's leased buckets, one per namespace with a quota, kept across shard moves. */
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
