// What clients see of an item: a delivery (dequeue) and an item state (get,
// dead). Optional fields are set only when present.

import type { Delivery, ItemState } from "./api.ts";
import { formatReceipt } from "./ids.ts";
import type { LiveItem } from "./item.ts";

export function toDelivery(item: LiveItem): Delivery {
  const record = item.record;
  return {
    id: item.id,
    topic: record.topic,
    priority: record.priority,
    payload: record.payload,
    metadata: record.metadata,
    attempt: record.attempt,
    receipt: formatReceipt(item.id, record.deliveries, record.leaseBoot),
    leaseExpiresAtMs: record.leaseExpiresAtMs as number,
    enqueuedAtMs: record.enqueuedAtMs,
  };
}

export function toItemState(item: LiveItem): ItemState {
  const record = item.record;
  const state: ItemState = {
    id: item.id,
    topic: record.topic,
    state: item.state,
    priority: record.priority,
    payload: record.payload,
    metadata: record.metadata,
    attempt: record.attempt,
    deliverAtMs: record.deliverAtMs,
    enqueuedAtMs: record.enqueuedAtMs,
  };
  if (item.state === "leased") state.leaseExpiresAtMs = record.leaseExpiresAtMs as number;
  if (record.requires !== null) state.requires = record.requires;
  if (record.after !== null) state.after = record.after;
  if (record.key !== null) state.key = record.key;
  if (record.deadReason !== null) state.deadReason = record.deadReason;
  return state;
}

// ---- recovery ----
