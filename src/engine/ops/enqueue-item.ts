// One item of an enqueue as it arrives, shaped to become its own stored
// record: the request's fields (EnqueueItemInput) and room for the record's
// others, which the engine fills in place (completeRecord). The server's
// decoder builds one per item, so an enqueued item costs one object from its
// request to its commit, where a separate input and record would be two
// (about 160 bytes an item: docs/decisions/013-lent-replies-and-scratch.md).
// Callers that build plain EnqueueItemInput literals (tests, the beanstalk
// front end) get an EnqueueItem made from theirs, never changed.

import { itemDefaults } from "../../limits.ts";
import type { DeliveryMode, ItemRecord, StoredState } from "../../storage/record.ts";
import type { EnqueueItemInput } from "../api.ts";
import type { UnstoredBytes } from "../state/item-parts.ts";

/** The absent payload or metadata: one shared empty array (nothing can write into zero bytes). */
const noBytes = new Uint8Array(0);

/**
 * An enqueue item that is also the record to be. 24 fields: JSC gives 20 to
 * 24 the same 224-byte object, so the two request-only fields (delayMs,
 * ttlMs) cost nothing over a plain record. Handed to Engine.enqueue, it
 * belongs to the engine: the caller must not reuse it.
 */
export class EnqueueItem implements EnqueueItemInput {
  topic = "";
  priority: number = itemDefaults.priority;
  payload: Uint8Array = noBytes;
  metadata: Uint8Array = noBytes;
  /** The request's deliver_at_ms until completeRecord, then the record's (absolute) instant. */
  deliverAtMs: number | null = null;
  delayMs: number | null = null;
  /** The request's lease_ms until completeRecord, then the record's (the default when none). */
  leaseMs: number | null = null;
  ttlMs: number | null = null;
  delivery: DeliveryMode = "at_least_once";
  maxAttempts: number = itemDefaults.maxAttempts;
  requires: Record<string, unknown> | null = null;
  after: string[] | null = null;
  key: string | null = null;
  group: string | null = null;
  prefers: Record<string, unknown> | null = null;
  preferWaitMs = 0;
  trace: string | null = null;
  // The record's own fields, set by completeRecord (ItemRecord documents them).
  ns = "";
  enqueuedAtMs = 0;
  ttlExpiresAtMs: number | null = null;
  attempt = 0;
  deliveries = 0;
  leaseBoot = 0;
  state: StoredState = "pending";
  leaseExpiresAtMs: number | null = null;
  deadReason: string | null = null;
  commit: Promise<void> | null = null;

  /** An EnqueueItem holding a copy of `input`'s fields (for callers that build plain inputs). */
  static of(input: EnqueueItemInput): EnqueueItem {
    const item = new EnqueueItem();
    item.topic = input.topic;
    item.priority = input.priority;
    item.payload = input.payload;
    item.metadata = input.metadata;
    item.deliverAtMs = input.deliverAtMs;
    item.delayMs = input.delayMs;
    item.leaseMs = input.leaseMs;
    item.ttlMs = input.ttlMs;
    item.delivery = input.delivery;
    item.maxAttempts = input.maxAttempts;
    item.requires = input.requires;
    item.after = input.after;
    item.key = input.key;
    item.group = input.group ?? null;
    item.prefers = input.prefers ?? null;
    item.preferWaitMs = input.preferWaitMs ?? 0;
    item.trace = input.trace ?? null;
    return item;
  }
}

/**
 * The stored record of `input`, enqueued into namespace `ns` at `nowMs`: the
 * input itself, completed, when it is an EnqueueItem (which the engine owns),
 * else a new one. Also what the item holds until its commit (UnstoredBytes).
 */
export function completeRecord(input: EnqueueItemInput, ns: string, nowMs: number): ItemRecord & UnstoredBytes {
  const item = input instanceof EnqueueItem ? input : EnqueueItem.of(input);
  item.ns = ns;
  item.enqueuedAtMs = nowMs;
  item.deliverAtMs ??= nowMs + (item.delayMs ?? 0);
  item.leaseMs ??= itemDefaults.leaseMs;
  item.ttlExpiresAtMs = item.ttlMs === null ? null : nowMs + item.ttlMs;
  // Resolved above: deliverAtMs and leaseMs are numbers now, as ItemRecord has them.
  return item as ItemRecord & UnstoredBytes;
}
