// The store's circuit breaker: one per store, fed with every commit's result.
// It protects against a failing device, not a busy one: only commits that
// FAIL (EIO, ENOSPC, MDB_MAP_FULL, ...) count. A commit that is slow but
// succeeds has made its writes durable, and refusing the next requests would
// not make the disk faster (group commit already puts more requests in each
// commit as commits slow down), so slowness never opens it; the group
// committer logs it instead. One breaker per store because the LMDB store
// commits every shard in one transaction: a disk failure fails them all
// together, so per-shard breakers could only ever open together.
//
// When open, writes are refused at once with UNAVAILABLE and a retry hint
// instead of piling up behind a sick disk; after a cool-down one write set is
// let through as a probe: it closes the breaker when it commits, reopens it
// when it fails. Time comes from the caller (an injected clock). Every
// transition is reported, with its reason, to `onTransition` (the server logs
// it at warn level).
//
//   closed --(failuresToOpen failed commits within windowMs)--> open
//   open --(cool-down over)--> half_open --(a write set is admitted)--> probing
//   probing --(probe committed)--> closed;  probing --(probe failed)--> open

import { assert } from "../lib/assert.ts";

export interface BreakerOptions {
  /** Window the failures must fall within (10 s): long enough to see a trend, short enough to forget a blip. */
  windowMs: number;
  /** Failed commits within the window that open the breaker (5): one failure can be a transient error; five in 10 s is a sick disk. */
  failuresToOpen: number;
  /** Time the breaker stays open before a probe is let through (5 s): gives a full disk or a stalled device time to recover. */
  coolDownMs: number;
  /** Retry hint while the probe's commit is in flight (100 ms): its result is due within one commit. */
  probeRetryAfterMs: number;
  /** Retry hint for a failed commit while the breaker is still closed (250 ms): a transient error may clear at once. */
  failureRetryAfterMs: number;
}

export const defaultBreakerOptions: Readonly<BreakerOptions> = Object.freeze({
  windowMs: 10_000,
  failuresToOpen: 5,
  coolDownMs: 5000,
  probeRetryAfterMs: 100,
  failureRetryAfterMs: 250,
});

export type BreakerState = "closed" | "open" | "half_open" | "probing";

/** Whether writes are accepted now; when not, why and when to retry. */
export type Availability = { available: true } | { available: false; retryAfterMs: number; reason: string };

/** One state change, for the log. */
export interface BreakerTransition {
  from: BreakerState;
  to: BreakerState;
  /** Why, in a sentence (with the failing commit's error when there is one). */
  reason: string;
  /** When the breaker opened: how long writes will be refused before a probe. */
  retryAfterMs?: number;
}

const availableNow: Availability = Object.freeze({ available: true });

export class CircuitBreaker {
  private readonly options: BreakerOptions;
  private current: BreakerState = "closed";
  /** When open: the instant the cool-down ends. */
  private reopenAtMs = 0;
  /** Times of the latest failed commits while closed, a ring of failuresToOpen entries; `failureCount` of them are set. */
  private readonly failureAtMs: Float64Array;
  private failureNext = 0;
  private failureCount = 0;

  constructor(
    options: Partial<BreakerOptions> = {},
    private readonly onTransition: (transition: BreakerTransition) => void = () => {},
  ) {
    this.options = { ...defaultBreakerOptions, ...options };
    const { failuresToOpen, coolDownMs, windowMs } = this.options;
    assert(Number.isSafeInteger(failuresToOpen) && failuresToOpen >= 1 && coolDownMs >= 0 && windowMs > 0, "bad breaker options");
    this.failureAtMs = new Float64Array(failuresToOpen);
  }

  /** True while closed: the hot path's one check (a closed breaker changes only when a commit fails). */
  get closed(): boolean {
    return this.current === "closed";
  }

  state(nowMs: number): BreakerState {
    this.refresh(nowMs);
    return this.current;
  }

  /** Whether new writes are accepted now; does not admit anything. */
  health(nowMs: number): Availability {
    const state: BreakerState = this.current === "closed" ? "closed" : this.state(nowMs);
    switch (state) {
      case "closed":
      case "half_open":
        return availableNow;
      case "open":
        return { available: false, retryAfterMs: Math.max(1, this.reopenAtMs - nowMs), reason: "storage is not accepting writes: its commits keep failing (circuit breaker open)" };
      case "probing":
        return { available: false, retryAfterMs: this.options.probeRetryAfterMs, reason: "storage is not accepting writes: a probe commit is testing it (circuit breaker probing)" };
    }
  }

  /**
   * Admit a write set. In half-open the first one admitted is the probe: the
   * breaker turns to probing and refuses others until the probe's result.
   */
  admit(nowMs: number): Availability {
    const health = this.health(nowMs);
    if (health.available && this.current === "half_open") this.move("probing", "a write set was admitted as the probe");
    return health;
  }

  /** Feed one commit's result: `failure` null when it committed. */
  record(nowMs: number, failure: Error | null): void {
    this.refresh(nowMs);
    switch (this.current) {
      case "closed":
        if (failure !== null && this.addFailure(nowMs)) {
          const { failuresToOpen, windowMs } = this.options;
          this.open(nowMs, `${failuresToOpen} commits failed within ${windowMs} ms, the last with: ${failure.message}`);
        }
        return;
      case "probing":
        if (failure === null) {
          this.failureCount = 0;
          this.move("closed", "the probe commit succeeded");
        } else {
          this.open(nowMs, `the probe commit failed: ${failure.message}`);
        }
        return;
      case "open":
      case "half_open":
        // Results of commits that were in flight when the breaker opened say
        // nothing about the disk now; only the probe decides.
        return;
    }
  }

  /** Retry hint for a write set whose commit failed. */
  retryAfterMs(nowMs: number): number {
    const health = this.health(nowMs);
    return health.available ? this.options.failureRetryAfterMs : health.retryAfterMs;
  }

  /** Lazily move open -> half_open when the cool-down has passed. */
  private refresh(nowMs: number): void {
    if (this.current === "open" && nowMs >= this.reopenAtMs) this.move("half_open", `the ${this.options.coolDownMs} ms cool-down is over: the next write set is the probe`);
  }

  /** Note a failure; true when failuresToOpen of them fall within the window. */
  private addFailure(nowMs: number): boolean {
    const ring = this.failureAtMs;
    ring[this.failureNext] = nowMs;
    this.failureNext = (this.failureNext + 1) % ring.length;
    this.failureCount = Math.min(ring.length, this.failureCount + 1);
    if (this.failureCount < ring.length) return false;
    // The ring is full: failureNext now points at the oldest of the last failuresToOpen failures.
    return nowMs - (ring[this.failureNext] as number) < this.options.windowMs;
  }

  private open(nowMs: number, reason: string): void {
    this.reopenAtMs = nowMs + this.options.coolDownMs;
    this.failureCount = 0;
    this.move("open", reason, this.options.coolDownMs);
  }

  private move(to: BreakerState, reason: string, retryAfterMs?: number): void {
    const from = this.current;
    this.current = to;
    this.onTransition(retryAfterMs === undefined ? { from, to, reason } : { from, to, reason, retryAfterMs });
  }
}
