// Engine values (camelCase) to their wire shapes (snake_case), for the op
// files' replies. Optional fields are left out when absent. Deliveries are
// written by the reply encoder (protocol/reply-encoder.ts, deliveryToWire).

import type { EndedItemState, ItemState, TopicCounts } from "../../engine/api.ts";
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
  if (s.deadReason !== undefined) wire.dead_reason = s.deadReason;
  return wire;
}

export function anyStateToWire(s: ItemState | EndedItemState | null): WireItemState | WireEndedItemState | null {
  if (s === null) return null;
  if (s.state === "ended") return { id: s.id, state: "ended", outcome: s.outcome };
  return itemStateToWire(s);
}

export function topicCountsToWire(t: TopicCounts): WireTopicCounts {
  const wire: WireTopicCounts = { topic: t.topic, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, paused: t.paused };
  if (t.pausedUntilMs !== undefined) wire.paused_until_ms = t.pausedUntilMs;
  return wire;
}
