// Read-only questions the web dashboard asks that no op answers: why a
// topic's ready items are not being taken and how its items with `prefers`
// were delivered (the matching view), which live item holds an idempotency
// key, and how long a topic's oldest ready item has waited. Nothing here
// changes engine state or the answers of other calls. The caller checks the
// namespace scope first (src/dashboard/scoped-inspector.ts, the one place
// that does so): these functions see every namespace.

import type { Capabilities, FeatureConstraint, Requires, Scalar } from "../matching/index.ts";
import { constraintHolds, satisfies, type ReadonlySignatureRegistry } from "../matching/index.ts";
import { stuckSignaturesListedMax } from "../../limits.ts";
import type { Namespace } from "../state/namespace.ts";
import { requiresToWire, type AskTracker } from "../matching/unmatchable.ts";

/** A worker kind that asked the topic within the ask window. */
export interface AskerView {
  kind: number;
  /** As a client would send them: a scalar for a one-value set; null for a worker without capabilities. */
  capabilities: Record<string, Scalar | Scalar[]> | null;
  lastAskAtMs: number;
}

/** One constraint a kind fails: what the signature wants of a feature and what the kind has (null: no such feature). */
export interface ConstraintMiss {
  feature: string;
  wants: unknown;
  has: Scalar[] | null;
}

export interface StuckSignature {
  /** Canonical requirements, as in the `stats` unmatchable report. */
  requires: Record<string, unknown>;
  /** Ready items of the topic with this signature. */
  items: number;
  /** Per asking kind, the constraints it fails (every kind fails at least one). */
  misses: Array<{ kind: number; failed: ConstraintMiss[]; noCapabilities: boolean }>;
}

/** Deliveries of a topic's items with `prefers` since start, by fit (engine/matching/fit-counts.ts). */
export interface FitDeliveries {
  full: number;
  partial: number;
  released: number;
}

export interface MatchingView {
  topicExists: boolean;
  fitDeliveries: FitDeliveries;
  /** Ready items held for workers that fit their `prefers` fully (their prefer_wait_ms not yet run out). */
  heldItems: number;
  askWindowMs: number;
  askers: AskerView[];
  /** Signature groups with ready items no asker may take, most items first, at most `signaturesMax`. */
  stuck: StuckSignature[];
  stuckTruncated: boolean;
}

/** What the engine offers the dashboard beyond the ops. */
export interface EngineInspector {
  matchingView(ns: string, topic: string, nowMs: number): MatchingView;
  /** The id of the live item (dead letters included) holding `key` in ns+topic, or null. */
  idByKey(ns: string, topic: string, key: string): string | null;
  /**
   * When the longest-waiting ready item of each named topic became ready
   * (its deliver_at_ms), read from the head of each ready heap: exact when
   * a topic's items share one priority, otherwise the oldest among the heads.
   * null for a topic with no ready item.
   */
  readySinceMs(ns: string, topics: readonly string[]): Array<number | null>;
}

export interface InspectSources {
  namespaces: ReadonlyMap<string, Namespace>;
  asks: AskTracker;
  registry: ReadonlySignatureRegistry;
  askWindowMs: number;
}


export function matchingView(sources: InspectSources, ns: string, topicName: string, nowMs: number): MatchingView {
  const fitDeliveries: FitDeliveries = { full: 0, partial: 0, released: 0 };
  const view: MatchingView = { topicExists: false, fitDeliveries, heldItems: 0, askWindowMs: sources.askWindowMs, askers: [], stuck: [], stuckTruncated: false };
  const topic = sources.namespaces.get(ns)?.topics.get(topicName);
  if (topic === undefined) return view;
  view.topicExists = true;
  const fit = topic.fitCounts;
  if (fit !== null) {
    fitDeliveries.full = fit.full;
    fitDeliveries.partial = fit.partial;
    fitDeliveries.released = fit.released;
  }
  // One registry read per signature with ready items, and only while some signature has preferences.
  if (sources.registry.preferringCount > 0) {
    for (const group of topic.signatures.values()) {
      if (group.readyCount > 0 && sources.registry.preferenceOf(group.signatureId)?.held === true) view.heldItems += group.readyCount;
    }
  }
  const asks = sources.asks.recentAsks(topic, nowMs, sources.askWindowMs);
  asks.sort((a, b) => b.lastAskMs - a.lastAskMs || a.kind - b.kind);
  view.askers = asks.map((ask) => ({ kind: ask.kind, capabilities: capabilitiesToWire(ask.caps), lastAskAtMs: ask.lastAskMs }));
  if (asks.length === 0) return view;
  // Keyed by requires: the signatures of one `requires` with different preferences (or a held variant) are one row.
  const stuckByRequires = new Map<string, { requires: Requires; items: number; signatureId: number }>();
  for (const group of topic.signatures.values()) {
    const items = group.readyCount;
    if (items === 0 || group.signatureId === 0) continue;
    const requires = sources.registry.requiresOf(group.signatureId);
    // A signature of preferences alone: every worker may take its items (a held one once its wait runs out).
    if (requires === null) continue;
    if (asks.some((ask) => satisfies(requires, ask.caps))) continue;
    const same = stuckByRequires.get(requires.key);
    if (same === undefined) stuckByRequires.set(requires.key, { requires, items, signatureId: group.signatureId });
    else same.items += items;
  }
  const stuck = [...stuckByRequires.values()];
  stuck.sort((a, b) => b.items - a.items || a.signatureId - b.signatureId);
  view.stuckTruncated = stuck.length > stuckSignaturesListedMax;
  for (const entry of stuck.slice(0, stuckSignaturesListedMax)) {
    view.stuck.push({
      requires: requiresToWire(entry.requires),
      items: entry.items,
      misses: asks.map((ask) => ({ kind: ask.kind, failed: missesOf(entry.requires, ask.caps), noCapabilities: ask.caps === null || ask.caps.features.size === 0 })),
    });
  }
  return view;
}

/** The constraints `caps` fails; a worker without capabilities fails every one (the contract's rule). */
export function missesOf(requires: Requires, caps: Capabilities | null): ConstraintMiss[] {
  const failed: ConstraintMiss[] = [];
  const empty = caps === null || caps.features.size === 0;
  for (const constraint of requires.constraints) {
    const values = empty ? undefined : caps.features.get(constraint.feature);
    if (!empty && constraintHolds(constraint, values)) continue;
    failed.push({ feature: constraint.feature, wants: wantsOf(constraint), has: values === undefined ? null : [...values] });
  }
  return failed;
}

function wantsOf(constraint: FeatureConstraint): unknown {
  return requiresToWire({ constraints: [constraint], key: "" })[constraint.feature];
}

function capabilitiesToWire(caps: Capabilities | null): Record<string, Scalar | Scalar[]> | null {
  if (caps === null) return null;
  return Object.fromEntries([...caps.features].map(([feature, values]) => [feature, values.length === 1 ? (values[0] as Scalar) : [...values]]));
}

export function idByKey(namespaces: ReadonlyMap<string, Namespace>, ns: string, topic: string, key: string): string | null {
  return namespaces.get(ns)?.topics.get(topic)?.keys.get(key)?.id ?? null;
}

export function readySinceMs(namespaces: ReadonlyMap<string, Namespace>, ns: string, topics: readonly string[]): Array<number | null> {
  const namespace = namespaces.get(ns);
  return topics.map((name) => {
    const topic = namespace?.topics.get(name);
    if (topic === undefined) return null;
    let oldest: number | null = null;
    for (const group of topic.signatures.values()) {
      for (const heap of group.heaps) {
        const head = heap?.peek();
        if (head !== undefined && (oldest === null || head.deliverAtMs < oldest)) oldest = head.deliverAtMs;
      }
    }
    return oldest;
  });
}
