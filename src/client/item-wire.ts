// An item's shapes on the wire and their conversion to and from the client's
// camelCase types: the enqueue input, the delivery, the item state (live or
// ended). Payload, metadata and result bytes in replies are copied, so they do
// not pin the socket's read buffers. Fields the server leaves out stay absent.

import type { WireDelivery, WireEndedItemState, WireItemState } from "../protocol/wire-types.ts";
import type { WireMap } from "./transport.ts";
import type { Delivery, EndedItemState, EnqueueItem, ItemState } from "./types.ts";

/** An ended item's `result` (the contract's "Results"), which protocol/wire-types.ts does not spell yet. */
type WireEndedIn = WireEndedItemState & { result?: Uint8Array };

const utf8 = new TextEncoder();

/** Bytes as sent: a string goes as its UTF-8. */
export function bytes(value: Uint8Array | string | undefined): Uint8Array | undefined {
  return typeof value === "string" ? utf8.encode(value) : value;
}

/** One item of an `enqueue` (or a schedule's `item`), snake_case; undefined fields are dropped by the codec. */
export function enqueueItemToWire(item: EnqueueItem, trace: string | undefined): WireMap {
  return {
    topic: item.topic,
    priority: item.priority,
    payload: bytes(item.payload),
    metadata: bytes(item.metadata),
    delay_ms: item.delayMs,
    deliver_at_ms: item.deliverAtMs,
    lease_ms: item.leaseMs,
    ttl_ms: item.ttlMs,
    delivery: item.delivery,
    max_attempts: item.maxAttempts,
    requires: item.requires,
    after: item.after,
    key: item.key,
    group: item.group,
    prefers: item.prefers,
    prefer_wait_ms: item.preferWaitMs,
    trace: item.trace ?? trace,
  };
}

/** A schedule's stored `item` read back (the `schedules` reply) as the EnqueueItem it was given as. */
export function enqueueItemFromWire(w: WireMap): EnqueueItem {
  const item: EnqueueItem = { topic: w.topic as string };
  const copy = <K extends keyof EnqueueItem>(key: K, wire: string, kind: "number" | "string" | "object"): void => {
    const value = w[wire];
    if (value !== undefined && value !== null && typeof value === kind) item[key] = value as EnqueueItem[K];
  };
  copy("priority", "priority", "number");
  if (w.payload instanceof Uint8Array) item.payload = new Uint8Array(w.payload);
  if (w.metadata instanceof Uint8Array) item.metadata = new Uint8Array(w.metadata);
  copy("delayMs", "delay_ms", "number");
  copy("deliverAtMs", "deliver_at_ms", "number");
  copy("leaseMs", "lease_ms", "number");
  copy("ttlMs", "ttl_ms", "number");
  copy("delivery", "delivery", "string");
  copy("maxAttempts", "max_attempts", "number");
  copy("requires", "requires", "object");
  copy("group", "group", "string");
  copy("prefers", "prefers", "object");
  copy("preferWaitMs", "prefer_wait_ms", "number");
  copy("trace", "trace", "string");
  return item;
}

export function deliveryFromWire(d: WireDelivery): Delivery {
  const delivery: Delivery = {
    id: d.id,
    topic: d.topic,
    priority: d.priority,
    payload: new Uint8Array(d.payload),
    metadata: new Uint8Array(d.metadata),
    attempt: d.attempt,
    receipt: d.receipt,
    leaseExpiresAtMs: d.lease_expires_at_ms,
    enqueuedAtMs: d.enqueued_at_ms,
  };
  if (typeof d.group === "string") delivery.group = d.group;
  if (typeof d.trace === "string") delivery.trace = d.trace;
  return delivery;
}

export function itemStateFromWire(s: WireItemState): ItemState {
  const state: ItemState = {
    id: s.id,
    topic: s.topic,
    state: s.state,
    priority: s.priority,
    payload: new Uint8Array(s.payload),
    metadata: new Uint8Array(s.metadata),
    attempt: s.attempt,
    deliverAtMs: s.deliver_at_ms,
    enqueuedAtMs: s.enqueued_at_ms,
  };
  if (s.lease_expires_at_ms !== undefined) state.leaseExpiresAtMs = s.lease_expires_at_ms;
  if (s.requires !== undefined) state.requires = s.requires;
  if (s.after !== undefined) state.after = s.after;
  if (s.key !== undefined) state.key = s.key;
  if (typeof s.group === "string") state.group = s.group;
  if (s.prefers !== undefined && s.prefers !== null) state.prefers = s.prefers;
  if (typeof s.prefer_wait_ms === "number") state.preferWaitMs = s.prefer_wait_ms;
  if (typeof s.trace === "string") state.trace = s.trace;
  if (s.dead_reason !== undefined) state.deadReason = s.dead_reason;
  return state;
}

/** One entry of a `get` or `wait` reply: a live item, an ended one (with its result, if its ack gave one), or null. */
export function anyStateFromWire(s: WireItemState | WireEndedIn | null): ItemState | EndedItemState | null {
  if (s === null || s === undefined) return null;
  if (s.state !== "ended") return itemStateFromWire(s);
  const ended: EndedItemState = { id: s.id, state: "ended", outcome: s.outcome };
  if (s.result instanceof Uint8Array) ended.result = new Uint8Array(s.result);
  return ended;
}
