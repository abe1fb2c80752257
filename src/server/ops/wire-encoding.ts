// Engine values (camelCase) to their wire shapes (snake_case), for the op
// files' replies. Optional fields are left out when absent. Deliveries are
// written by the reply encoder (protocol/reply-encoder.ts, deliveryToWire).

import type { EndedItemState, ExplainReason, GroupCounts, ItemState, PolicyView, TopicCounts } from "../../engine/api.ts";
import type { WireEndedItemState, WireItemState, WireTopicCounts } from "../../protocol/wire-types.ts";

export function itemStateToWire(s: ItemState): WireItemState {
  const wire: WireItemState = {
    id: s.id,
    topic: s.topic,
    state: s.state,
    priority: s.priority,
    payload: s.payload,
    metadata: s.metadata,
    attempt: s.attempt,
    deliver_at_ms: s.deliverAtMs,
    enqueued_at_ms: s.enqueuedAtMs,
  };
  if (s.leaseExpiresAtMs !== undefined) wire.lease_expires_at_ms = s.leaseExpiresAtMs;
  if (s.requires !== undefined) wire.requires = s.requires;
  if (s.after !== undefined) wire.after = s.after;
  if (s.key !== undefined) wire.key = s.key;
  if (s.group !== undefined) wire.group = s.group;
  if (s.prefers !== undefined) wire.prefers = s.prefers;
  if (s.preferWaitMs !== undefined) wire.prefer_wait_ms = s.preferWaitMs;
  if (s.trace !== undefined) wire.trace = s.trace;
  if (s.deadReason !== undefined) wire.dead_reason = s.deadReason;
  return wire;
}

export function anyStateToWire(s: ItemState | EndedItemState | null): WireItemState | WireEndedItemState | null {
  if (s === null) return null;
  if (s.state === "ended") return s.result === undefined ? { id: s.id, state: "ended", outcome: s.outcome } : { id: s.id, state: "ended", outcome: s.outcome, result: s.result };
  return itemStateToWire(s);
}

export function topicCountsToWire(t: TopicCounts): WireTopicCounts {
  const wire: WireTopicCounts = { topic: t.topic, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, paused: t.paused };
  if (t.pausedUntilMs !== undefined) wire.paused_until_ms = t.pausedUntilMs;
  return wire;
}

export function policyViewToWire(p: PolicyView): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  if (p.group !== undefined) wire.group = p.group;
  if (p.weight !== undefined) wire.weight = p.weight;
  if (p.maxLeased !== undefined) wire.max_leased = p.maxLeased;
  if (p.rate !== undefined) wire.rate = { count: p.rate.count, per_ms: p.rate.perMs };
  return wire;
}

export function groupCountsToWire(g: GroupCounts): Record<string, unknown> {
  const wire: Record<string, unknown> = { group: g.group, ready: g.ready, delayed: g.delayed, waiting: g.waiting, leased: g.leased, dead: g.dead, paused: g.paused };
  if (g.pausedUntilMs !== undefined) wire.paused_until_ms = g.pausedUntilMs;
  return wire;
}

export function explainReasonToWire(r: ExplainReason): Record<string, unknown> {
  const wire: Record<string, unknown> = { reason: r.reason };
  if (r.untilMs !== undefined) wire.until_ms = r.untilMs;
  if (r.after !== undefined) wire.after = r.after;
  if (r.deadReason !== undefined) wire.dead_reason = r.deadReason;
  if (r.leased !== undefined) wire.leased = r.leased;
  if (r.max !== undefined) wire.max = r.max;
  if (r.nextAtMs !== undefined) wire.next_at_ms = r.nextAtMs;
  if (r.kinds !== undefined) wire.kinds = r.kinds.map((k) => ({ failed: k.failed }));
  if (r.ahead !== undefined) wire.ahead = r.ahead;
  return wire;
}
