// What clients see of an item: its item state (get, dead; optional fields are
// set only when present) and a delivery (ItemStates.lease reads the payload
// and hands it here).

import type { Delivery, ItemState } from "../api.ts";
import type { ReceiptFormat } from "./ids.ts";
import type { LiveItem } from "./item.ts";
import type { StoredOnly } from "./item-parts.ts";

/** `stored` is what only the store keeps of the item (ItemBytes.bytesOf reads it back). */
export function toItemState(item: LiveItem, stored: StoredOnly): ItemState {
  const state: ItemState = {
    id: item.id,
    topic: item.topic.name,
    state: item.state,
    priority: item.priority,
    payload: stored.payload,
    metadata: stored.metadata,
    attempt: item.attempt,
    deliverAtMs: item.deliverAtMs,
    enqueuedAtMs: stored.enqueuedAtMs,
  };
  if (item.state === "leased") state.leaseExpiresAtMs = item.leaseExpiresAtMs as number;
  if (stored.requires !== null) state.requires = stored.requires;
  if (stored.prefers !== undefined && stored.prefers !== null) state.prefers = stored.prefers;
  if (stored.preferWaitMs !== undefined && stored.preferWaitMs !== 0) state.preferWaitMs = stored.preferWaitMs;
  if (stored.trace !== undefined && stored.trace !== null) state.trace = stored.trace;
  const extras = item.extras;
  if (extras !== null) {
    if (extras.after !== null) state.after = extras.after;
    if (extras.key !== null) state.key = extras.key;
    if (extras.deadReason !== null) state.deadReason = extras.deadReason;
  }
  // Outside the extras: an item whose only rare field is its group points at the group alone (item.ts).
  const group = item.group;
  if (group !== null) state.group = group.name as string;
  return state;
}

/** A leased item as its delivery: the receipt names this delivery and the boot that granted it (the engine's, whose tails `receipts` keeps). */
export function toDelivery(item: LiveItem, payload: Uint8Array, metadata: Uint8Array, enqueuedAtMs: number, trace: string | null, receipts: ReceiptFormat): Delivery {
  const id = item.id;
  const delivery: Delivery = {
    id,
    topic: item.topic.name,
    priority: item.priority,
    payload,
    metadata,
    attempt: item.attempt,
    receipt: receipts.format(id, item.deliveries, receipts.boot),
    leaseExpiresAtMs: item.leaseExpiresAtMs as number,
    enqueuedAtMs,
  };
  const group = item.group;
  if (group !== null) delivery.group = group.name as string;
  if (trace !== null) delivery.trace = trace;
  return delivery;
}
