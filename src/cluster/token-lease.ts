// Tokens a node leases from one token bucket in PostgreSQL (cluster mode):
// the bucket lives in a database row refilled by the database's clock, and
// the node holds a local count that never refills by itself, so the cluster
// never spends more than the database granted. Two kinds of bucket use it:
// a namespace's enqueue quota (quota-leases.ts) and a topic's own `rate`
// (topic-bound-leases.ts); docs/CLUSTER.md, "Quotas across nodes" and
// "Topic bounds across nodes".
//
// A node draws every quotaDrawPeriodMs (period()) enough to hold its target:
// quotaDrawUseFactor times its use over the last period, at least a floor of
// one period's refill, and at least the largest request refused lately; what
// it holds above the target it hands back. It also draws at once when a take
// finds too few tokens. At most one draw is in flight; one unanswered after
// quotaDrawTimeoutMs is given up (its answer, if it comes, is ignored: tokens
// lost, never counted twice). Tokens handed back leave the local count
// before the statement is sent, so a failure loses them rather than
// doubling them.

import type { Clock } from "../lib/clock.ts";
import { clusterLimits } from "../limits.ts";

/** A draw's answer: tokens granted (the negative `want` of a return), and the tokens the database's bucket holds after it. */
export interface TokenGrant {
  granted: number;
  left: number;
}

/** One draw of `want` tokens from the bucket's row (negative: hand that many back). */
export type DrawTokens = (want: number) => Promise<TokenGrant>;

export interface TokenLeaseOptions {
  /** The bucket's size (its burst) and the time it takes to refill it whole. */
  capacity: number;
  perMs: number;
  /**
   * Whether an idle node keeps its floor. A namespace quota does (an enqueue
   * is admitted without waiting for a draw); a topic's rate does not (a token
   * held by an idle node is one the busy nodes lack, and a dequeue may wait
   * for a draw: it parks, and is served when the tokens come).
   */
  idleFloor: boolean;
  /**
   * Whether a take that finds too few tokens draws at once even when the
   * last draw came back short. Quotas do (their client was told when to come
   * back); a topic's rate does not, so a worker polling a dry topic does not
   * send a draw per dequeue: the next period draws again.
   */
  drawAfterShort: boolean;
  /** Told when a draw brought tokens (a topic's parked dequeues are served then). */
  onGranted?: () => void;
  /** Milliseconds the bucket takes to refill `missing` tokens (default: from capacity and perMs; a quota passes its own rule). */
  refillMs?: (missing: number) => number;
}

const { quotaDrawPeriodMs, quotaDrawUseFactor, quotaDrawTimeoutMs } = clusterLimits;

/** Milliseconds a bucket of `capacity` per `perMs` takes to refill `missing` tokens (at least 1). */
function tokenRefillMs(missing: number, capacity: number, perMs: number): number {
  // The small epsilon absorbs floating-point residue from continuous refill (0.999 + 0.001 tokens).
  return Math.max(1, Math.ceil((missing * perMs) / capacity - 1e-6));
}

export class TokenLease {
  /** Tokens drawn and not used: only draws add to them. */
  private tokens = 0;
  /** Taken in this period so far, and in the last whole one. */
  private used = 0;
  private usedLastPeriod = 0;
  /** The largest request refused lately, and when: draws cover it until its client has had time to come back. */
  private refused = 0;
  private refusedAtMs = 0;
  /** The draw in flight: its number (later answers to an earlier number are ignored) and when it went (null: none). */
  private drawSeq = 0;
  private drawSentMs: number | null = null;
  /** Whether the last answered draw granted less than it asked. */
  private short = false;
  /** The database bucket's tokens after the last answered draw, and when (this node's clock; for hints only). */
  private dbLeft = 0;
  private dbLeftAtMs = 0;
  /** Why the last draw failed (null: it did not). */
  private failed: string | null = null;
  capacity: number;
  perMs: number;
  /** Tokens a node keeps at hand: one period's refill, at least one. */
  floor: number;

  constructor(
    private readonly drawTokens: DrawTokens,
    private readonly clock: Clock,
    private readonly options: TokenLeaseOptions,
  ) {
    this.capacity = options.capacity;
    this.perMs = options.perMs;
    this.floor = floorOf(options.capacity, options.perMs);
  }

  private refillMs(missing: number): number {
    return this.options.refillMs?.(missing) ?? tokenRefillMs(missing, this.capacity, this.perMs);
  }

  /** Tokens this node holds (drawn, not used). */
  get held(): number {
    return this.tokens;
  }

  /** Whether a draw is under way. */
  get drawing(): boolean {
    return this.drawSentMs !== null;
  }

  /** Why the last draw failed, or null when it went through. */
  get failure(): string | null {
    return this.failed;
  }

  /** Whether the node wants tokens it does not hold (a take was refused lately). */
  get wanting(): boolean {
    return this.refused > 0;
  }

  /** The same bucket under a new size or period (a policy changed): tokens held above the new size go back at the next period. */
  resize(capacity: number, perMs: number): void {
    this.capacity = capacity;
    this.perMs = perMs;
    this.floor = floorOf(capacity, perMs);
  }

  /** Take `count` tokens if held; else remember the refusal, draw (at once, see drawAfterShort) and return false. */
  tryTake(count: number, nowMs: number): boolean {
    if (this.tokens >= count) {
      this.tokens -= count;
      this.used += count;
      if (count >= this.refused) this.refused = 0;
      return true;
    }
    if (count >= this.refused) {
      this.refused = count;
      this.refusedAtMs = nowMs;
    }
    if (this.options.drawAfterShort || !this.short) void this.draw(nowMs);
    return false;
  }

  /** Every period: give up a draw unanswered too long, close the period's use, and draw or hand back toward the target. */
  period(nowMs: number): Promise<void> {
    if (this.drawSentMs !== null && nowMs - this.drawSentMs >= quotaDrawTimeoutMs) {
      this.drawSeq++;
      this.drawSentMs = null;
      this.failed = `no answer from the database in ${quotaDrawTimeoutMs} ms`;
    }
    this.usedLastPeriod = this.used;
    this.used = 0;
    this.short = false;
    return this.draw(nowMs);
  }

  /** Hand every token held back to the database (a node leaving, or a policy that no longer binds). */
  returnAll(nowMs: number): Promise<void> {
    this.refused = 0;
    this.usedLastPeriod = 0;
    this.used = 0;
    return this.send(-this.tokens, nowMs, true);
  }

  /**
   * When `missing` more tokens may be here: soon (`soonMs`) when the
   * database's bucket (as last seen, refilled since by this node's clock)
   * has them, else when it will have refilled them, plus the period in which
   * a draw fetches them.
   */
  hintMs(missing: number, nowMs: number, soonMs: number): number {
    const elapsedMs = Math.max(0, nowMs - this.dbLeftAtMs);
    const inDatabase = Math.min(this.capacity, this.dbLeft + (elapsedMs * this.capacity) / this.perMs);
    if (inDatabase >= missing) return soonMs;
    return this.refillMs(missing - inDatabase) + quotaDrawPeriodMs;
  }

  /** Tokens this node means to hold now. */
  private target(nowMs: number): number {
    const use = Math.max(this.used, this.usedLastPeriod) * quotaDrawUseFactor;
    if (this.refused > 0 && nowMs - this.refusedAtMs > this.refillMs(this.refused) + 2 * quotaDrawPeriodMs) this.refused = 0;
    const busy = use > 0 || this.refused > 0;
    const floor = this.options.idleFloor || busy ? this.floor : 0;
    return Math.min(this.capacity, Math.max(floor, use, this.refused));
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
    return this.drawTokens(want).then(
      (grant) => {
        if (seq !== this.drawSeq) return;
        this.drawSentMs = null;
        this.failed = null;
        this.short = want > 0 && grant.granted < want;
        this.dbLeft = grant.left;
        this.dbLeftAtMs = this.clock.nowMs();
        if (grant.granted > 0) {
          this.tokens += grant.granted;
          this.options.onGranted?.();
        }
      },
      (error: unknown) => {
        if (seq !== this.drawSeq) return;
        this.drawSentMs = null;
        this.failed = (error as Error).message;
      },
    );
  }
}

/** One period's refill of a bucket, at least one token and at most the bucket. */
function floorOf(capacity: number, perMs: number): number {
  return Math.min(capacity, Math.max(1, Math.ceil((capacity * quotaDrawPeriodMs) / perMs)));
}
