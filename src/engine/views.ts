// What clients see of an item as an item state (get, dead). Optional fields
// are set only when present. (A delivery is built where the lease is granted,
// ItemStates.lease, which reads the payload once for the write and the reply.)

import type { ItemState } from "./api.ts";
import type { LiveItem } from "./item.ts";

/** `bytes` are the item's payload and metadata (ItemStates.bytesOf: memory drops them once stored). */
export function toItemState(item: LiveItem, bytes: { payload: Uint8Array; metadata: Uint8Array }): ItemState {
  const state: ItemState = {
    id: item.id,
    topic: item.topic.name,
    state: item.state,
    priority: item.priority,
    payload: bytes.payload,
    metadata: bytes.metadata,
    attempt: item.attempt,
    deliverAtMs: item.deliverAtMs,
    enqueuedAtMs: item.enqueuedAtMs,
  };
  if (item.state === "leased") state.leaseExpiresAtMs = item.leaseExpiresAtMs as number;
  const extras = item.extras;
  if (extras !== null) {
    if (extras.requires !== null) state.requires = extras.requires;
    if (extras.after !== null) state.after = extras.after;
    if (extras.key !== null) state.key = extras.key;
    if (extras.deadReason !== null) state.deadReason = extras.deadReason;
  }
  return state;
}
