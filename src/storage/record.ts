// The persisted shape of an item, an ended-item outcome and the store's meta
// record. The binary encoding of these lives in record-codec.ts, versioned
// beside them: bump RECORD_VERSION on any change of shape and keep a reader
// for the previous version.

/**
 * Version 2 added ItemRecord.leaseBoot and MetaRecord.boots (receipts name
 * the boot their lease was issued in). Version 3 moved an item's
 * leaseExpiresAtMs into a fixed header with the other fields that change
 * after enqueue, so a lease patches a copy of the stored value instead of
 * encoding the whole record (record-codec.ts). The pause record
 * (PauseRecord) was added in version 3 as a new record kind: no existing
 * shape changed, so the version did not move; versions 1 and 2 hold no pause
 * records (their readers refuse one). Version 4 added ItemRecord.group and
 * PauseRecord.group (a group's pause), each an optional field after the
 * others, and the policy record (PolicyRecord) as a new kind. Values of
 * versions 1 to 3 still load, with group null. Version 5 added
 * ItemRecord.prefers, preferWaitMs and trace, in an optional extension after
 * the group (item-record.ts): a version 4 value is a version 5 value without it.
 * Version 5 also added OutcomeRecord.result, an optional tail flagged in the
 * outcome byte: a version 1 to 4 outcome is a version 5 one without it.
 */
export const RECORD_VERSION = 5;

export type DeliveryMode = "at_least_once" | "at_most_once";

/**
 * Where an item is in its life, as stored. `pending` covers ready, delayed and
 * waiting: which one is derived from deliverAtMs and the `after` list at load.
 */
export type StoredState = "pending" | "leased" | "dead";

export interface ItemRecord {
  /** Namespace and topic the item lives in. */
  ns: string;
  topic: string;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  enqueuedAtMs: number;
  deliverAtMs: number;
  /** Lease length a dequeue grants when it gives none of its own. */
  leaseMs: number;
  /** Absolute instant the TTL ends the item, or null for no TTL. */
  ttlExpiresAtMs: number | null;
  delivery: DeliveryMode;
  maxAttempts: number;
  /** Deliveries since enqueue or the last redrive (the contract's `attempt`). */
  attempt: number;
  /** Deliveries ever made, never reset: names the current receipt. */
  deliveries: number;
  /**
   * The boot (MetaRecord.boots) in which the latest delivery was made, 0
   * before the first one (and for items stored before record version 2). A
   * receipt names it too, so a receipt issued in a boot whose lease never
   * reached disk cannot match a delivery a later boot makes.
   */
  leaseBoot: number;
  state: StoredState;
  /** Set while leased. */
  leaseExpiresAtMs: number | null;
  /** Set for a dead letter: why it died (e.g. "max_attempts", "nacked", "dependency 3:17 cancelled"). */
  deadReason: string | null;
  /** The item's `requires` map as enqueued (validated), or null. */
  requires: Record<string, unknown> | null;
  /** The `after` ids as enqueued, or null. */
  after: string[] | null;
  /** Idempotency key, or null. */
  key: string | null;
  /** The fairness group the item belongs to (the contract's `group`), or null for the nil group. */
  group: string | null;
  /** The item's `prefers` map as enqueued (validated); absent or null for none. */
  prefers?: Record<string, unknown> | null;
  /** The contract's `prefer_wait_ms`; absent or 0 for none. */
  preferWaitMs?: number;
  /** The producer's trace context (the contract's `trace`); absent or null for none. */
  trace?: string | null;
}

export type Outcome = "acked" | "cancelled" | "expired";

/** How an ended item ended; kept for outcome_retention_ms. */
export interface OutcomeRecord {
  ns: string;
  outcome: Outcome;
  endedAtMs: number;
  /**
   * The `ack` result of an acked item, when it was given one: such an item's
   * end is an outcome record of its own rather than an acked-log entry (the
   * flag in the outcome byte from record version 5 on, record-codec.ts).
   * Absent or null: none.
   */
  result?: Uint8Array | null;
}

/**
 * A paused topic or group (the `pause` op): kept until `resume` or until the
 * pause ends by itself, so a pause survives a restart. One per (ns, topic,
 * group).
 */
export interface PauseRecord {
  ns: string;
  topic: string;
  /** The paused group, or null when the pause is the topic's own. */
  group: string | null;
  /** When the pause ends by itself, or null for "until resume". */
  untilMs: number | null;
}

/**
 * A stored policy (the `policy` op): the bounds of a topic, of one group, or
 * the default of every group without one. One per (ns, topic, group); kept
 * until cleared, whether or not the topic holds items.
 */
export interface PolicyRecord {
  ns: string;
  topic: string;
  /** null: the topic's own policy; "*": the default for groups without one; else that group's. */
  group: string | null;
  /** The group's share of deliveries relative to the others (groups only; null: the default weight). */
  weight: number | null;
  /** At most this many of the scope's items leased at once, or null for no bound. */
  maxLeased: number | null;
  /** A token bucket of `count` deliveries refilled over `perMs`, or null for no bound. */
  rate: { count: number; perMs: number } | null;
}

/** One per store: checked at open so a data dir is never misread. */
export interface MetaRecord {
  formatVersion: number;
  shards: number;
  /** Random id chosen when the data dir was created. */
  nodeId: string;
  /**
   * Item keys below this value may have been handed out. Keys are reserved in
   * blocks (the block's end is written in the same commit as the first item
   * that uses it), so keys keep growing across restarts without a write per item.
   */
  keysReservedBelow: number;
  /**
   * How many times the data dir has been opened, this open included: bumped
   * and committed at open, before the store is handed out (0 only in a
   * version 1 record, before its first open by this build).
   */
  boots: number;
}
