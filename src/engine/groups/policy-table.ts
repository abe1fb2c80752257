// The stored policies (the `policy` op) of every topic, by namespace and
// topic: a topic's own bounds, its "*" default for groups, and its named
// groups' policies. They live here rather than on the Topic because a policy
// outlives its topic's items (the contract: a policy set before the first
// enqueue, or kept while a topic is empty, still holds).

import type { PolicyRecord } from "../../storage/record.ts";
import { TokenBucket } from "./token-bucket.ts";

/** Bucket keys of the topic's own rate and of the nil group's (no group name starts with NUL). */
const topicBucketKey = "\u0000topic";
const nilBucketKey = "\u0000nil";
/** Buckets looked at per take for a sweep of full ones (oldest first): amortised upkeep. */
const bucketSweepPerTake = 2;

/** The group name that means "every group without a policy of its own". */
export const defaultGroupName = "*";

/** One topic's policies. */
export class TopicPolicies {
  /** The topic's own bound (max_leased, rate), or null. */
  own: PolicyRecord | null = null;
  /** The "*" policy: every group without one of its own. */
  fallback: PolicyRecord | null = null;
  /** Named groups' policies. */
  readonly named = new Map<string, PolicyRecord>();
  /**
   * The rate buckets in use, by scope: kept here, not on the topic or group,
   * because a topic goes when it empties and a group is forgotten, and a
   * bucket that came back full would let a burst past the rate. A full
   * bucket is dropped (a new one starts full: nothing is lost).
   */
  private readonly buckets = new Map<string, TokenBucket>();
  /**
   * The policies read back from storage at a start, and when. A bucket made
   * for one of them starts empty at that instant: the buckets before the
   * restart are not stored, and a full one would let a burst past the rate
   * across the restart. A policy set since starts its buckets full.
   */
  private readonly loaded = new Set<PolicyRecord>();
  private loadedAtMs = 0;

  /** `record` was read back from storage at nowMs (policy-ops.ts's load). */
  markLoaded(record: PolicyRecord, nowMs: number): void {
    this.loaded.add(record);
    this.loadedAtMs = nowMs;
  }

  /** The rate bucket of the topic itself (group undefined) or of a group (null: the nil group), or null when no rate binds it. */
  bucketOf(group: string | null | undefined, nowMs: number): TokenBucket | null {
    const policy = group === undefined ? this.own : this.forGroup(group);
    const rate = policy?.rate ?? null;
    const key = group === undefined ? topicBucketKey : group === null ? nilBucketKey : group;
    // A bucket whose rate went was dropped with the policy change (rebucket).
    if (rate === null) return null;
    // Sweep first: a bucket made below starts full, and must not be swept before its first take.
    this.sweepBuckets(nowMs);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      const loadedAtMs = this.loadedAtMs;
      const sinceLoad = policy !== null && this.loaded.has(policy) && nowMs - loadedAtMs < rate.perMs;
      bucket = sinceLoad ? TokenBucket.emptiedAt(rate.count, rate.perMs, loadedAtMs) : new TokenBucket(rate.count, rate.perMs, nowMs);
      this.buckets.set(key, bucket);
    } else if (bucket.count !== rate.count || bucket.perMs !== rate.perMs) {
      bucket = bucket.resized(rate.count, rate.perMs, nowMs);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Look at the oldest few buckets: a full one is dropped, another goes to the back, so the sweep moves through them all. */
  private sweepBuckets(nowMs: number): void {
    for (let n = 0; n < bucketSweepPerTake && this.buckets.size > 0; n++) {
      const [key, bucket] = this.buckets.entries().next().value as [string, TokenBucket];
      this.buckets.delete(key);
      if (!bucket.full(nowMs)) this.buckets.set(key, bucket);
    }
  }

  /** The policy that binds group `name` (null: the nil group): its own, else the default, else none. */
  forGroup(name: string | null): PolicyRecord | null {
    if (name !== null) {
      const own = this.named.get(name);
      if (own !== undefined) return own;
    }
    return this.fallback;
  }

  /** Whether any group is bound or weighted (the topic then rotates between its groups). */
  get hasGroupPolicies(): boolean {
    return this.fallback !== null || this.named.size > 0;
  }

  get isEmpty(): boolean {
    return this.own === null && this.fallback === null && this.named.size === 0;
  }

  get(group: string | null): PolicyRecord | null {
    if (group === null) return this.own;
    if (group === defaultGroupName) return this.fallback;
    return this.named.get(group) ?? null;
  }

  set(group: string | null, record: PolicyRecord | null, nowMs: number): void {
    const had = this.get(group);
    if (had !== null) this.loaded.delete(had);
    if (group === null) this.own = record;
    else if (group === defaultGroupName) this.fallback = record;
    else if (record === null) this.named.delete(group);
    else this.named.set(group, record);
    this.rebucket(group, nowMs);
  }

  /**
   * The buckets the changed policy binds follow its rate from now on (not
   * from their next read, which may be much later for a group with no
   * items): resized at nowMs, keeping the tokens they hold, or dropped.
   */
  private rebucket(group: string | null, nowMs: number): void {
    for (const [key, bucket] of [...this.buckets]) {
      const scope = key === topicBucketKey ? undefined : key === nilBucketKey ? null : key;
      const affected = group === null ? scope === undefined : group === defaultGroupName ? scope !== undefined && (scope === null || !this.named.has(scope)) : scope === group;
      if (!affected) continue;
      const rate = (scope === undefined ? this.own : this.forGroup(scope))?.rate ?? null;
      if (rate === null) this.buckets.delete(key);
      else if (bucket.count !== rate.count || bucket.perMs !== rate.perMs) this.buckets.set(key, bucket.resized(rate.count, rate.perMs, nowMs));
    }
  }

  /** Every policy: the topic's own first, then the default and the named ones by name (code point order; "*" sorts among them). */
  sorted(): PolicyRecord[] {
    const out: PolicyRecord[] = [];
    if (this.own !== null) out.push(this.own);
    const grouped = [...this.named.values()];
    if (this.fallback !== null) grouped.push(this.fallback);
    grouped.sort((a, b) => compareNames(a.group as string, b.group as string));
    return out.concat(grouped);
  }
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class PolicyTable {
  private readonly byNamespace = new Map<string, Map<string, TopicPolicies>>();
  /** Policies stored, over every topic (bounded by limits.policiesMax). */
  size = 0;

  /** The topic's policies, or null when it has none. */
  of(ns: string, topic: string): TopicPolicies | null {
    return this.byNamespace.get(ns)?.get(topic) ?? null;
  }

  /** Set (or with null, clear) one policy; returns the topic's policies after the change (null when none are left). */
  set(record: PolicyRecord | null, ns: string, topic: string, group: string | null, nowMs: number): TopicPolicies | null {
    let topics = this.byNamespace.get(ns);
    let policies = topics?.get(topic) ?? null;
    const had = policies?.get(group) ?? null;
    if (record === null && had === null) return policies;
    if (policies === null) {
      policies = new TopicPolicies();
      if (topics === undefined) {
        topics = new Map();
        this.byNamespace.set(ns, topics);
      }
      topics.set(topic, policies);
    }
    policies.set(group, record, nowMs);
    this.size += (record === null ? 0 : 1) - (had === null ? 0 : 1);
    if (policies.isEmpty) {
      topics!.delete(topic);
      if (topics!.size === 0) this.byNamespace.delete(ns);
      return null;
    }
    return policies;
  }

  *all(): Iterable<PolicyRecord> {
    for (const topics of this.byNamespace.values()) for (const policies of topics.values()) yield* policies.sorted();
  }
}
