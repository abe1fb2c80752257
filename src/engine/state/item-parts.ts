// The side objects of a live item (item.ts). A LiveItem holds only what every
// item needs; what most items never use lives in objects it creates on first
// use, so a million ready items cost one small object each (JSC sizes objects
// in classes: 12 fields fit 112 bytes, 13-18 take 160, 20-24 take 224).
//
// - ItemSettings: settings fixed at enqueue, immutable and shared by every
//   item enqueued with the same values (an engine's ItemSettingsTable).
// - ItemProgress: what happens after enqueue: the delay or lease deadline and
//   the delivery counts. Created at the first delay or delivery.
// - ItemExtras: TTL, after, idempotency key, dead reason, a nack's metadata,
//   and the record an enqueue holds until its commit is durable.
//
// What never changes after enqueue and is not needed to order, match or
// deliver an item (payload, enqueuedAtMs, requires) is not kept in memory at
// all once stored: StoredOnly is read back when an item is shown or written
// whole (ItemBytes.bytesOf).

import { type HeapNode, IntrusiveHeapNode } from "../../lib/pairing-heap.ts";
import { itemSettingsSharedMax } from "../../limits.ts";
import type { DeliveryMode, ItemRecord } from "../../storage/record.ts";
import { type Deadline, DeadlineKind } from "../time/deadlines.ts";

/** The kinds of deadline an item has: its delay or its lease (one node, reused), and its TTL. */
export type ItemDeadlineKind = typeof DeadlineKind.Due | typeof DeadlineKind.Lease | typeof DeadlineKind.Ttl | typeof DeadlineKind.PreferRelease;

/**
 * A deadline that fires on an item. The item type is a parameter because
 * item.ts, which declares it, imports this file (ItemDeadline<LiveItem> there).
 */
export type ItemDeadline<Item> = Deadline<ItemDeadlineKind, Item>;

/** Settings fixed at enqueue (record.ts documents each). Immutable: shared between items. */
export class ItemSettings {
  constructor(
    readonly leaseMs: number,
    readonly maxAttempts: number,
    readonly delivery: DeliveryMode,
  ) {}
}

/**
 * An engine's shared settings objects (interning: they never change, so
 * sharing is invisible). Clients use a handful of combinations; past
 * itemSettingsSharedMax a new one gets an object of its own rather than
 * growing the table, which lives and dies with its engine.
 */
export class ItemSettingsTable {
  private readonly shared = new Map<string, ItemSettings>();
  /** The last answer: consecutive items almost always repeat it (no name built). */
  private last = new ItemSettings(0, 0, "at_least_once");

  get size(): number {
    return this.shared.size;
  }

  /** The shared settings object for a record's leaseMs, maxAttempts and delivery. */
  forRecord(record: Pick<ItemRecord, "leaseMs" | "maxAttempts" | "delivery">): ItemSettings {
    return this.intern(record.leaseMs, record.maxAttempts, record.delivery);
  }

  /** The shared settings object for these values. */
  intern(leaseMs: number, maxAttempts: number, delivery: DeliveryMode): ItemSettings {
    const last = this.last;
    if (last.leaseMs === leaseMs && last.maxAttempts === maxAttempts && last.delivery === delivery) return last;
    const name = `${leaseMs}/${maxAttempts}/${delivery}`;
    let settings = this.shared.get(name);
    if (settings === undefined) {
      settings = new ItemSettings(leaseMs, maxAttempts, delivery);
      if (this.shared.size < itemSettingsSharedMax) this.shared.set(name, settings);
    }
    this.last = settings;
    return settings;
  }
}

/**
 * An item's deadline and delivery counts (record.ts documents the counts). It
 * is its own entry in the deadline heap, with Deadline's fields
 * (time/deadlines.ts), so the queue handles it as one: the delay-due deadline
 * while delayed, the lease-expiry deadline while leased, idle otherwise and
 * reused for the item's next delay or lease. An item's first delay or lease
 * thus allocates this one object, not it, a heap node and a Deadline
 * (docs/decisions/013-lent-replies-and-scratch.md); 11 fields, one 112-byte
 * cell.
 */
export class ItemProgress<Item> extends IntrusiveHeapNode<ItemProgress<Item>> {
  seq = 0;
  atMs = 0;
  kind: ItemDeadlineKind = DeadlineKind.Due;
  attempt = 0;
  deliveries = 0;
  leaseBoot = 0;
  leaseExpiresAtMs: number | null = null;
  constructor(readonly target: Item) {
    super();
  }
}

/**
 * The fields of an item that only the store keeps (memory has no copy once
 * the enqueue is durable): its payload and metadata, its enqueue instant and
 * its `requires` map as enqueued (matching uses the signature id instead).
 */
export interface StoredOnly {
  payload: Uint8Array;
  metadata: Uint8Array;
  enqueuedAtMs: number;
  requires: Record<string, unknown> | null;
  /** `prefers` and `prefer_wait_ms` as enqueued (the signature holds their parsed form), and `trace`; absent: none. */
  prefers?: Record<string, unknown> | null;
  preferWaitMs?: number;
  trace?: string | null;
}

/**
 * What an enqueue holds until its commit is durable: the fields the store
 * does not have yet, and the commit. The enqueue's ItemRecord with a
 * `commit` field added serves as it (the write holds that record anyway): no
 * object of its own per enqueued item.
 */
export interface UnstoredBytes extends StoredOnly {
  /** The enqueue's durable promise, once the op ended its WriteSet (an idempotent re-enqueue waits on it too). */
  commit: Promise<void> | null;
}

/** The fields few items use. */
export class ItemExtras<Item> {
  /** Set until the enqueue's commit is durable (see LiveItem.committed). */
  unstored: UnstoredBytes | null = null;
  /** Absolute instant the TTL ends the item, or null for no TTL. */
  ttlExpiresAtMs: number | null = null;
  /** The TTL deadline, until it fires. */
  ttlNode: HeapNode<ItemDeadline<Item>> | null = null;
  /** The TTL passed while leased: the lease may still be acked; any other end of it ends the item `expired`. */
  ttlPassed = false;
  /** Why it died, while a dead letter. */
  deadReason: string | null = null;
  /** The `after` ids as enqueued, or null. */
  after: string[] | null = null;
  /** Idempotency key, or null. */
  key: string | null = null;
  /** The item's named group (a Group of groups/group.ts: LiveItem.group types it), or null. */
  group: object | null = null;
  /** Metadata set by a nack: newer than the stored record's until that write commits, so memory keeps it. */
  metadata: Uint8Array | null = null;
  /**
   * The priority was changed after the enqueue (nack or deadLetter with a
   * priority): the state patch does not cover priority, and the stored
   * record is older until that write commits, so every later write of this
   * item writes the whole record (ItemBytes.writeItem).
   */
  priorityRewritten = false;

  /** Only the group set: the item may point at its group instead (item.ts's markStored). */
  onlyGroup(): boolean {
    return this.group !== null && this.unstored === null && this.ttlExpiresAtMs === null && this.ttlNode === null && !this.ttlPassed && this.deadReason === null && this.after === null && this.key === null && this.metadata === null && !this.priorityRewritten;
  }

  /** Nothing set: the item may drop this object. */
  isEmpty(): boolean {
    return (
      this.unstored === null &&
      this.ttlExpiresAtMs === null &&
      this.ttlNode === null &&
      !this.ttlPassed &&
      this.deadReason === null &&
      this.after === null &&
      this.key === null &&
      this.group === null &&
      this.metadata === null &&
      !this.priorityRewritten
    );
  }
}
