// The "unmatchable items" report: which worker kinds asked which topic
// recently, and, at `stats` time, the ready items of each topic that none of
// those workers may take, grouped by signature. An operator reads it as "work
// that will never run unless a different worker shows up" (a typo in a
// requirement, a retired GPU model, a pool that was scaled to zero).
//
// The hot path is `noteAsks`, called once per dequeue: per listed topic one
// WeakMap lookup and one Map lookup, and for a kind that asked the topic
// before, one store (no allocation). State is held per Topic object in a
// WeakMap, so a topic that ends (it holds no items) takes its askers with it.
// Each topic keeps at most askersPerTopicMax kinds; a new kind past that
// replaces the one that asked least recently.
//
// Eligibility at stats time is evaluated with satisfies() on the asker's
// Capabilities, memoized per stats call, not with the Matcher: Matcher kind
// ids can be evicted (isEligible asserts on them) and asking the Matcher would
// also reorder its LRU. A kind id is never reused for another capability set,
// so keying askers by kind id is safe; the same set seen under a new id after
// an eviction is simply a second entry with equal capabilities.
// docs/MATCHING.md ("Unmatchable items report") documents the semantics.

import { assert } from "../../lib/assert.ts";
import { type Capabilities, type FeatureConstraint, type Requires, type Scalar, type ReadonlySignatureRegistry, satisfies } from "./index.ts";
import type { Namespace } from "../state/namespace.ts";
import type { LiveItem } from "../state/item.ts";
import type { Topic } from "../ready/topic.ts";
import type { UnmatchableReport } from "../reads/stats-shape.ts";

import { askersPerTopicMax, unmatchableSignaturesListedMax } from "../../limits.ts";
/** One worker kind's latest ask of one topic. */
class Ask {
  constructor(
    readonly caps: Capabilities | null,
    public lastAskMs: number,
  ) {}
}

export class AskTracker {
  private readonly byTopic = new WeakMap<Topic<LiveItem>, Map<number, Ask>>();

  /** A dequeue by worker kind `kind` (capabilities `caps`) listed these topics of `ns`. */
  noteAsks(ns: Namespace | undefined, topics: ReadonlyArray<{ topic: string }>, kind: number, caps: Capabilities | null, nowMs: number): void {
    if (ns === undefined) return;
    for (let t = 0; t < topics.length; t++) {
      const topic = ns.topics.get((topics[t] as { topic: string }).topic);
      if (topic !== undefined) this.noteAsk(topic, kind, caps, nowMs);
    }
  }

  noteAsk(topic: Topic<LiveItem>, kind: number, caps: Capabilities | null, nowMs: number): void {
    let asks = this.byTopic.get(topic);
    if (asks === undefined) {
      asks = new Map();
      this.byTopic.set(topic, asks);
    }
    const ask = asks.get(kind);
    if (ask !== undefined) {
      if (nowMs > ask.lastAskMs) ask.lastAskMs = nowMs;
      return;
    }
    if (asks.size >= askersPerTopicMax) evictLeastRecent(asks);
    asks.set(kind, new Ask(caps, nowMs));
  }

  /**
   * Every kind that asked `topic` within `windowMs` of nowMs, with its
   * capabilities and last ask, for the dashboard's matching view. Read only:
   * it forgets nothing, so a view never changes what `stats` reports.
   */
  recentAsks(topic: Topic<LiveItem>, nowMs: number, windowMs: number): Array<{ kind: number; caps: Capabilities | null; lastAskMs: number }> {
    const asks = this.byTopic.get(topic);
    if (asks === undefined) return [];
    const recent: Array<{ kind: number; caps: Capabilities | null; lastAskMs: number }> = [];
    for (const [kind, ask] of asks) if (nowMs - ask.lastAskMs <= windowMs) recent.push({ kind, caps: ask.caps, lastAskMs: ask.lastAskMs });
    return recent;
  }

  /** Kinds remembered for `topic`, recent or not yet forgotten (for tests). */
  rememberedKinds(topic: Topic<LiveItem>): number {
    return this.byTopic.get(topic)?.size ?? 0;
  }

  /**
   * Capabilities of the kinds that asked `topic` within `windowMs` of nowMs,
   * one per distinct set. Older asks are forgotten on the way.
   */
  recentAskers(topic: Topic<LiveItem>, nowMs: number, windowMs: number): Array<Capabilities | null> {
    const asks = this.byTopic.get(topic);
    if (asks === undefined) return [];
    const recent: Array<Capabilities | null> = [];
    const seen = new Set<string>();
    for (const [kind, ask] of asks) {
      if (nowMs - ask.lastAskMs > windowMs) {
        asks.delete(kind);
        continue;
      }
      const key = ask.caps === null ? "" : ask.caps.key;
      if (seen.has(key)) continue;
      seen.add(key);
      recent.push(ask.caps);
    }
    if (asks.size === 0) this.byTopic.delete(topic);
    return recent;
  }
}

/**
 * Builds the reports of one stats call. Verdicts (capability set x
 * signature) are memoized for the call, so a fleet's few kinds are evaluated
 * once per signature however many topics they ask.
 */
export class UnmatchableReporter {
  private readonly verdicts = new Map<string, Map<number, boolean>>();

  constructor(
    private readonly tracker: AskTracker,
    private readonly registry: ReadonlySignatureRegistry,
    /** An ask counts as recent for this long (Limits.unmatchableAskWindowMs). */
    private readonly windowMs: number,
  ) {
    assert(windowMs > 0, "unmatchable: the ask window must be positive");
  }

  /** The report for one topic at nowMs: one pass over its signature groups, stopping per group at the first asker that may take it. */
  report(topic: Topic<LiveItem>, nowMs: number): UnmatchableReport {
    const recent = this.tracker.recentAskers(topic, nowMs, this.windowMs);
    const report: UnmatchableReport = { asked: recent.length > 0, askers: recent.length, items: 0, signatures: [], signaturesTruncated: false };
    if (recent.length === 0 || topic.takeable === 0) return report;
    const stuck: Array<{ signatureId: number; items: number }> = [];
    for (const group of topic.signatures.values()) {
      if (group.readyCount === 0) continue;
      let takeable = false;
      for (const caps of recent) {
        if (this.eligible(caps, group.signatureId)) {
          takeable = true;
          break;
        }
      }
      if (takeable) continue;
      report.items += group.readyCount;
      stuck.push({ signatureId: group.signatureId, items: group.readyCount });
    }
    // Most items first; ties by signature id so the order is stable between calls.
    stuck.sort((a, b) => b.items - a.items || a.signatureId - b.signatureId);
    const listed = Math.min(stuck.length, unmatchableSignaturesListedMax);
    for (let i = 0; i < listed; i++) {
      const entry = stuck[i] as { signatureId: number; items: number };
      // Signature 0 is takeable by every asker, so a stuck group always has requirements.
      const requires = this.registry.requiresOf(entry.signatureId) as Requires;
      report.signatures.push({ requires: requiresToWire(requires), items: entry.items });
    }
    report.signaturesTruncated = stuck.length > listed;
    return report;
  }

  private eligible(caps: Capabilities | null, signatureId: number): boolean {
    // Signature 0, and a signature of preferences alone: any worker may take its items (a held one once its wait ends).
    const requires = this.registry.requiresOf(signatureId);
    if (requires === null) return true;
    // A worker without capabilities takes only items without requires (the contract).
    if (caps === null) return false;
    let verdicts = this.verdicts.get(caps.key);
    if (verdicts === undefined) {
      verdicts = new Map();
      this.verdicts.set(caps.key, verdicts);
    }
    const known = verdicts.get(signatureId);
    if (known !== undefined) return known;
    const verdict = satisfies(requires, caps);
    verdicts.set(signatureId, verdict);
    return verdict;
  }
}

function evictLeastRecent(asks: Map<number, Ask>): void {
  let victim: number | null = null;
  let oldestMs = Number.POSITIVE_INFINITY;
  for (const [kind, ask] of asks) {
    if (ask.lastAskMs < oldestMs) {
      oldestMs = ask.lastAskMs;
      victim = kind;
    }
  }
  assert(victim !== null, "eviction from an empty ask map");
  asks.delete(victim);
}

/**
 * A signature's canonical requirements as a `requires` map a client could
 * have sent: `v` for "equals or contains v", otherwise an operator object.
 * Built with Object.fromEntries so a feature name is only ever a data key.
 */
export function requiresToWire(requires: Requires): Record<string, unknown> {
  return Object.fromEntries(requires.constraints.map((c) => [c.feature, constraintToWire(c)]));
}

function constraintToWire(c: FeatureConstraint): unknown {
  const onlyOneValue = c.allOf !== null && c.allOf.length === 1 && c.anyOf === null && c.range === null && c.notEqual === null && c.exists === null;
  if (onlyOneValue) return (c.allOf as readonly Scalar[])[0];
  const out: Record<string, unknown> = {};
  if (c.allOf !== null) out.all = [...c.allOf];
  if (c.anyOf !== null) out.in = [...c.anyOf];
  if (c.range !== null) {
    if (c.range.min !== Number.NEGATIVE_INFINITY) out[c.range.minInclusive ? "gte" : "gt"] = c.range.min;
    if (c.range.max !== Number.POSITIVE_INFINITY) out[c.range.maxInclusive ? "lte" : "lt"] = c.range.max;
  }
  if (c.notEqual !== null) out.ne = c.notEqual;
  if (c.exists !== null) out.exists = c.exists;
  return out;
}
