// One circuit breaker per shard, fed with every commit result. It opens when a
// shard's commits keep failing or turn slow, so requests for that shard get
// UNAVAILABLE with a retry hint at once instead of piling up behind a sick
// disk; after a cool-down it lets one write set through as a probe, closes
// when the probe commits, and reopens when it fails. Time comes from the
// caller (an injected clock), never from the real clock.
//
//   closed --(failures or slow p50 in window)--> open --(cool-down over)--> half-open
//   half-open --(a write set is admitted)--> probing --(commit ok)--> closed
//                                                    --(commit failed)--> open

import { assert } from "../lib/assert.ts";

export interface BreakerOptions {
  /** Rolling window the failure and latency counts cover (10 s): long enough to see a trend, short enough to forget a blip. */
  windowMs: number;
  /** Failed commits in the window that open the breaker (5): one failure can be a transient error; five in 10 s is a sick disk. */
  failuresToOpen: number;
  /** Commit latency whose median (p50) in the window opens the breaker (1 s): a healthy fsync'd commit takes about 0.5 ms. */
  slowCommitMs: number;
  /** Samples needed before the median counts (5): one slow commit (a page-cache flush) must not open it. */
  slowSamplesMin: number;
  /** Time the breaker stays open before a probe is let through (5 s): gives a full disk or a stalled device time to recover. */
  coolDownMs: number;
  /** Retry hint while the probe's commit is in flight (100 ms): its result is due within one commit. */
  probeRetryAfterMs: number;
  /** Retry hint for a failed commit while the breaker is still closed (250 ms): a transient error may clear at once. */
  failureRetryAfterMs: number;
  /** Samples kept per shard (10,000): bounds memory when commits are very frequent; the oldest go first. */
  samplesMax: number;
}

export const defaultBreakerOptions: Readonly<BreakerOptions> = Object.freeze({
  windowMs: 10_000,
  failuresToOpen: 5,
  slowCommitMs: 1000,
  slowSamplesMin: 5,
  coolDownMs: 5000,
  probeRetryAfterMs: 100,
  failureRetryAfterMs: 250,
  samplesMax: 10_000,
});

export type BreakerState = "closed" | "open" | "half_open" | "probing";

export type ShardHealth = { available: true } | { available: false; retryAfterMs: number };

interface Sample {
  atMs: number;
  ok: boolean;
  slow: boolean;
}

class ShardBreaker {
  state: BreakerState = "closed";
  /** When open: the instant the cool-down ends. */
  reopenAtMs = 0;
  /** Samples in time order; `head` is the oldest still counted. */
  private samples: Sample[] = [];
  private head = 0;
  private failures = 0;
  private slow = 0;

  constructor(private readonly options: BreakerOptions) {}

  /** Lazily move open -> half_open when the cool-down has passed. */
  refresh(nowMs: number): void {
    if (this.state === "open" && nowMs >= this.reopenAtMs) this.state = "half_open";
  }

  /** Add a commit result; true when it should open the breaker. */
  addSample(nowMs: number, ok: boolean, durationMs: number): boolean {
    const sample = { atMs: nowMs, ok, slow: durationMs > this.options.slowCommitMs };
    this.samples.push(sample);
    if (!sample.ok) this.failures++;
    if (sample.slow) this.slow++;
    this.prune(nowMs);
    const counted = this.samples.length - this.head;
    if (this.failures >= this.options.failuresToOpen) return true;
    return counted >= this.options.slowSamplesMin && this.slow * 2 > counted;
  }

  clearSamples(): void {
    this.samples = [];
    this.head = 0;
    this.failures = 0;
    this.slow = 0;
  }

  private prune(nowMs: number): void {
    const oldestMs = nowMs - this.options.windowMs;
    while (this.head < this.samples.length) {
      const sample = this.samples[this.head] as Sample;
      const overCount = this.samples.length - this.head > this.options.samplesMax;
      if (sample.atMs > oldestMs && !overCount) break;
      if (!sample.ok) this.failures--;
      if (sample.slow) this.slow--;
      this.head++;
    }
    // Compact once the dropped prefix dominates, so the array does not grow forever.
    if (this.head > 1024 && this.head * 2 > this.samples.length) {
      this.samples = this.samples.slice(this.head);
      this.head = 0;
    }
  }
}

export class CircuitBreakers {
  private readonly options: BreakerOptions;
  private readonly shards: ShardBreaker[];

  constructor(shardCount: number, options: Partial<BreakerOptions> = {}) {
    this.options = { ...defaultBreakerOptions, ...options };
    assert(this.options.failuresToOpen >= 1 && this.options.coolDownMs >= 0 && this.options.windowMs > 0, "bad breaker options");
    this.shards = Array.from({ length: shardCount }, () => new ShardBreaker(this.options));
  }

  state(shard: number, nowMs: number): BreakerState {
    const breaker = this.breaker(shard);
    breaker.refresh(nowMs);
    return breaker.state;
  }

  /** Whether new writes to the shard are accepted now; does not change state. */
  health(shard: number, nowMs: number): ShardHealth {
    const breaker = this.breaker(shard);
    breaker.refresh(nowMs);
    switch (breaker.state) {
      case "closed":
      case "half_open":
        return { available: true };
      case "open":
        return { available: false, retryAfterMs: Math.max(1, breaker.reopenAtMs - nowMs) };
      case "probing":
        return { available: false, retryAfterMs: this.options.probeRetryAfterMs };
    }
  }

  /**
   * Admit a write set to the shard. In half-open the first one admitted is the
   * probe: the breaker turns to probing and refuses others until its result.
   */
  admit(shard: number, nowMs: number): ShardHealth {
    const health = this.health(shard, nowMs);
    const breaker = this.breaker(shard);
    if (health.available && breaker.state === "half_open") breaker.state = "probing";
    return health;
  }

  /** Feed one commit result for the shard. */
  record(shard: number, nowMs: number, ok: boolean, durationMs: number): void {
    const breaker = this.breaker(shard);
    breaker.refresh(nowMs);
    switch (breaker.state) {
      case "closed":
        if (breaker.addSample(nowMs, ok, durationMs)) this.open(breaker, nowMs);
        return;
      case "probing":
        if (ok && durationMs <= this.options.slowCommitMs) {
          breaker.state = "closed";
          breaker.clearSamples();
        } else {
          this.open(breaker, nowMs);
        }
        return;
      case "open":
      case "half_open":
        // Results of commits that were in flight when the breaker opened say
        // nothing about the disk now; only the probe decides.
        return;
    }
  }

  /** Retry hint for a write set whose commit failed on this shard. */
  retryAfterMs(shard: number, nowMs: number): number {
    const health = this.health(shard, nowMs);
    return health.available ? this.options.failureRetryAfterMs : health.retryAfterMs;
  }

  private open(breaker: ShardBreaker, nowMs: number): void {
    breaker.state = "open";
    breaker.reopenAtMs = nowMs + this.options.coolDownMs;
    breaker.clearSamples();
  }

  private breaker(shard: number): ShardBreaker {
    const breaker = this.shards[shard];
    assert(breaker !== undefined, `shard ${shard} out of range`);
    return breaker;
  }
}
