// The `explain` op: why an item is not being delivered now, from the same
// indexes and bounds a dequeue reads (so it cannot disagree with one). A
// ready item's reasons, in the order a dequeue meets them: a pause (topic,
// then group), the topic's own bounds, its group's, then the workers: no
// dequeue of the topic lately, none that may take it, or how many items go
// before it for each kind that may (the fewest). No reason: it is first in
// line for some kind that asked.
//
// `behind` counts the items a kind would be given first, in the rotation's
// order (groups/group-rotation.ts): better priority first; at the item's own
// priority, an item of group h at position r (0 first) among h's items of
// that priority goes out at virtual time v(h) + r / weight(h), and those
// before the item's own such time count. It stops at limits.explainAheadMax.

import type { ExplainedItem, ExplainReason } from "../api.ts";
import { type Capabilities, type Matcher, type Requires, satisfies } from "../matching/index.ts";
import type { AskTracker } from "../matching/unmatchable.ts";
import { Held } from "../groups/group.ts";
import type { Group } from "../groups/group.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import type { ReadyHeap } from "../ready/ready-heap.ts";
import type { Topic } from "../ready/topic.ts";
import { missesOf } from "./inspect.ts";
import { requiresToWire } from "../matching/unmatchable.ts";

export interface ExplainSources {
  readonly states: ItemStates;
  readonly asks: AskTracker;
  readonly matcher: Matcher;
  readonly askWindowMs: number;
}

export function explain(sources: ExplainSources, ns: string, ids: string[], nowMs: number): { items: Array<ExplainedItem | null> } {
  const items: Array<ExplainedItem | null> = [];
  for (const id of ids) {
    const item = sources.states.items.get(id);
    if (item === undefined || item.ns !== ns) {
      items.push(null);
      continue;
    }
    items.push({ id, state: item.state, reasons: reasonsOf(sources, item, nowMs) });
  }
  return { items };
}

function reasonsOf(sources: ExplainSources, item: LiveItem, nowMs: number): ExplainReason[] {
  switch (item.state) {
    case "delayed":
      return [{ reason: "delayed", untilMs: item.deliverAtMs }];
    case "waiting":
      return [{ reason: "waiting", after: (item.after ?? []).filter((dep) => sources.states.dependencyStatus(item.ns, dep) !== "acked") }];
    case "leased":
      return [{ reason: "leased", untilMs: item.leaseExpiresAtMs as number }];
    case "dead":
      return [{ reason: "dead", deadReason: item.deadReason ?? "" }];
    case "ready":
      return readyReasons(sources, item, nowMs);
  }
}

function readyReasons(sources: ExplainSources, item: LiveItem, nowMs: number): ExplainReason[] {
  const topic = item.topic;
  const reasons: ExplainReason[] = [];
  const topicPause = topic.pause;
  if (topicPause !== null) reasons.push(topicPause.untilMs === null ? { reason: "topic_paused" } : { reason: "topic_paused", untilMs: topicPause.untilMs });
  const group = item.group ?? topic.rotation?.nil ?? null;
  if (group !== null && group.pause !== null) reasons.push(group.pause.untilMs === null ? { reason: "group_paused" } : { reason: "group_paused", untilMs: group.pause.untilMs });
  const policies = topic.policies;
  const topicMax = policies?.own?.maxLeased ?? null;
  if (topicMax !== null && topic.leased >= topicMax) reasons.push({ reason: "topic_max_leased", leased: topic.leased, max: topicMax });
  const topicBucket = policies?.bucketOf(undefined, nowMs) ?? null;
  if (topicBucket !== null && ((topic.held & Held.rate) !== 0 || !topicBucket.canTake(nowMs))) reasons.push({ reason: "topic_rate", nextAtMs: topicBucket.nextAtMs(nowMs) });
  if (group !== null) {
    const groupMax = group.policy?.maxLeased ?? null;
    if (groupMax !== null && group.leased >= groupMax) reasons.push({ reason: "group_max_leased", leased: group.leased, max: groupMax });
    const bucket = policies?.bucketOf(group.name, nowMs) ?? null;
    if (bucket !== null && ((group.held & Held.rate) !== 0 || !bucket.canTake(nowMs))) reasons.push({ reason: "group_rate", nextAtMs: bucket.nextAtMs(nowMs) });
  }
  if (reasons.length > 0) return reasons;
  const askers = sources.asks.recentAskers(topic, nowMs, sources.askWindowMs);
  if (askers.length === 0) return [{ reason: "no_dequeue" }];
  const requires = sources.states.registry.requiresOf(item.signatureId);
  let takers = askers.filter((caps) => mayTake(requires, caps));
  if (takers.length === 0) return [{ reason: "no_worker", kinds: askers.map((caps) => ({ failed: failedOf(requires as Requires, caps) })) }];
  // Held for its prefer_wait_ms (state/item-states.ts's hold): only workers that fit its prefers fully may take it yet.
  const timer = item.timerNode;
  if (timer !== null && sources.states.registry.preferenceOf(item.signatureId)?.held === true) {
    takers = takers.filter((caps) => sources.matcher.fitsFully(sources.matcher.workerKind(caps), item.signatureId));
    if (takers.length === 0) return [{ reason: "held_for_preferred", untilMs: timer.atMs }];
  }
  let ahead = Number.POSITIVE_INFINITY;
  for (const caps of takers) ahead = Math.min(ahead, countAhead(sources, topic, item, caps));
  return ahead === 0 ? [] : [{ reason: "behind", ahead }];
}

/** Whether a worker with `caps` may take items of `requires` (none: any worker). */
function mayTake(requires: Requires | null, caps: Capabilities | null): boolean {
  if (requires === null || requires.constraints.length === 0) return true;
  if (caps === null) return false;
  return satisfies(requires, caps);
}

/** The constraints `caps` fails, as the contract writes them ("gpu: {gte: 2}"). */
function failedOf(requires: Requires, caps: Capabilities | null): string[] {
  return missesOf(requires, caps).map((miss) => `${miss.feature}: ${formatValue(requiresToWire({ constraints: [requires.constraints.find((c) => c.feature === miss.feature)!], key: "" })[miss.feature])}`);
}

function formatValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(formatValue).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${formatValue(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value);
}

/** Items a worker with `caps` would be given before `item`, counted up to explainAheadMax. */
function countAhead(sources: ExplainSources, topic: Topic<LiveItem>, item: LiveItem, caps: Capabilities | null): number {
  const limit = sources.states.limits.explainAheadMax;
  const kind = sources.matcher.workerKind(caps);
  const rotation = topic.rotation;
  const ownGroup = item.group ?? rotation?.nil ?? null;
  // The item's own virtual time: its group's v plus its rank among the group's items of its priority.
  const heapsOf = (group: Group<LiveItem> | null): Array<ReadyHeap<LiveItem>> => (group === null || group === rotation?.nil ? nilHeaps(topic) : group.heaps());
  let ownRank = 0;
  for (const heap of heapsOf(ownGroup)) {
    heap.walkInOrder((other) => {
      if (other === item || !before(other, item)) return true;
      if (other.priority === item.priority && sources.matcher.isEligible(kind, other.signatureId)) ownRank++;
      return false;
    });
  }
  const ownV = ownGroup === null ? 0 : ownGroup.v + ownRank / ownGroup.weight;
  let ahead = 0;
  const groups: Array<Group<LiveItem> | null> = rotation === null ? [null] : [rotation.nil, ...rotation.named.values()];
  for (const group of groups) {
    if (ahead >= limit) break;
    // A held group gives nothing now; the item's own group is counted whatever holds it.
    if (group !== null && group !== ownGroup && group.held !== 0) continue;
    const v = group === null ? 0 : group.v;
    const weight = group === null ? 1 : group.weight;
    for (const heap of heapsOf(group)) {
      let rank = 0;
      heap.walkInOrder((other) => {
        if (ahead >= limit || other === item || other.priority > item.priority) return true;
        if (!sources.matcher.isEligible(kind, other.signatureId)) return false;
        if (group === ownGroup || other.priority < item.priority) {
          if (!before(other, item)) return true;
          ahead++;
          return false;
        }
        // Same priority, another group: it goes first while its virtual time is the lesser.
        const otherV = v + rank / weight;
        rank++;
        if (otherV < ownV || (otherV === ownV && before(other, item))) {
          ahead++;
          return false;
        }
        return true;
      });
    }
  }
  return Math.min(ahead, limit);
}

function before(a: LiveItem, b: LiveItem): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.key < b.key;
}

/** The signature heaps holding the topic's ready items without a group. */
function nilHeaps(topic: Topic<LiveItem>): Array<ReadyHeap<LiveItem>> {
  const heaps: Array<ReadyHeap<LiveItem>> = [];
  for (const signature of topic.signatures.values()) for (const heap of signature.heaps) if (heap !== undefined) heaps.push(heap);
  return heaps;
}
