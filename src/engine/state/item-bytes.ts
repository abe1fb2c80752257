// An item's bytes, between memory and the store: its payload and metadata
// read back from the store (memory drops them once the enqueue is durable),
// and its writes: a patched copy of its stored value when the stored value
// has the shape memory's record would have (storage/stored-item-patch.ts),
// else the whole record (toRecord with the bytes read back).

import { assert } from "../../lib/assert.ts";
import type { ItemRecord } from "../../storage/record.ts";
import { noBytes } from "../../storage/item-record.ts";
import type { Store } from "../../storage/store.ts";
import { ItemStateFields, PatchRefused, readStoredItemBytes, StoredItemPatcher, type StoredItemBytes } from "../../storage/stored-item-patch.ts";
import type { WriteSet } from "../../storage/writer.ts";
import { type LiveItem, toRecord } from "./item.ts";
import type { StoredOnly } from "./item-parts.ts";

/** What deliveryBytes reads for a delivery; `stored` is the copy of the stored value they came from, null when it was read as a view. */
export class DeliveryBytes implements StoredItemBytes {
  payload: Uint8Array = noBytes;
  metadata: Uint8Array = noBytes;
  enqueuedAtMs = 0;
  trace: string | null = null;
  stored: Uint8Array | null = null;
}

/** A nack's metadata, kept in memory until its write commits, wins over the stored one. */
function withMemoryMetadata(item: LiveItem, read: DeliveryBytes): DeliveryBytes {
  const metadata = item.extras?.metadata;
  if (metadata !== undefined && metadata !== null) read.metadata = metadata;
  return read;
}

/** What others may read through ItemBytes (ItemStates.bytes): an item's payload and metadata. */
export type ReadonlyItemBytes = Pick<ItemBytes, "bytesOf">;

export class ItemBytes {
  /** Scratch for patchedValue (the engine is synchronous: one write at a time). */
  private readonly fields = new ItemStateFields();
  /** Scratch for deliveryBytes and valueBytes: read once per delivery, so no object per delivery. */
  private readonly read = new DeliveryBytes();
  private readonly patcher: StoredItemPatcher;

  /**
   * Where a delivery reads its stored value without a copy, when the store
   * offers views (035, 044): its deferred lease write then reads the value
   * again when it comes due, which most leases (acked first) never do.
   */
  private readonly viewer: Required<Pick<Store, "viewItemBytes">> | null;

  constructor(private readonly reader: Pick<Store, "readItem" | "readItemBytes" | "viewItemBytes" | "readDeliveryBytes">) {
    this.patcher = new StoredItemPatcher(reader);
    this.viewer = reader.viewItemBytes !== undefined ? (reader as Required<Pick<Store, "viewItemBytes">>) : null;
  }

  /** Write the item's current state into `set`: a patched copy of its stored value when possible, else the whole record. */
  writeItem(set: WriteSet, item: LiveItem, storedCopy: Uint8Array | null = null): void {
    const value = this.patchedValue(item, storedCopy);
    if (value !== null) set.putItemBytes(item.shard, item.key, value);
    else set.putItem(item.shard, item.key, this.recordOf(item));
  }

  /**
   * A copy of the item's stored value with its state fields set from memory,
   * or null when memory holds something the stored value lacks (see the file
   * header) and the whole record must be written.
   */
  patchedValue(item: LiveItem, storedCopy: Uint8Array | null = null): Uint8Array | null {
    const extras = item.extras;
    if (item.unstored !== null || (extras !== null && (extras.metadata !== null || extras.priorityRewritten))) return null;
    const fields = this.fields;
    fields.hasTtl = extras !== null && extras.ttlExpiresAtMs !== null;
    fields.hasDeadReason = extras !== null && extras.deadReason !== null;
    fields.hasAfter = extras !== null && extras.after !== null;
    fields.hasKey = extras !== null && extras.key !== null;
    fields.atMostOnce = item.delivery === "at_most_once";
    fields.state = item.storedState;
    fields.deliverAtMs = item.deliverAtMs;
    fields.leaseExpiresAtMs = item.leaseExpiresAtMs;
    fields.attempt = item.attempt;
    fields.deliveries = item.deliveries;
    fields.leaseBoot = item.leaseBoot;
    const value = storedCopy === null ? this.patcher.patched(item.shard, item.key, fields) : this.patcher.patchedCopy(storedCopy, fields);
    // Messages are built only on failure (this runs once per lease).
    if (value === PatchRefused.missing) assert(false, `engine: item ${item.id} is live but not stored`);
    return value === PatchRefused.shape ? null : value;
  }

  /**
   * A leased item's payload and metadata for its delivery, read from its
   * stored value without decoding the rest (a nack's metadata, kept in memory
   * until its write commits, wins over the stored one), and `stored`, the
   * copy of the stored value they came from (null when read as a view): the
   * deferred lease write patches it instead of reading the value a second
   * time. The answer is this ItemBytes' scratch, good until its next
   * deliveryBytes or valueBytes: copy what you keep (ItemStates.lease does,
   * into the Delivery; payload and metadata are copies already).
   */
  deliveryBytes(item: LiveItem): DeliveryBytes {
    const read = this.read;
    // The store's ring of recent values (044): the parts alone, no value to keep for the lease write.
    if (this.reader.readDeliveryBytes?.(item.shard, item.key, read) === true) {
      read.stored = null;
      return withMemoryMetadata(item, read);
    }
    const viewer = this.viewer;
    const value = viewer !== null ? viewer.viewItemBytes(item.shard, item.key) : this.reader.readItemBytes(item.shard, item.key);
    // Messages are built only on failure (this runs once per delivery).
    if (value === null) assert(false, `engine: item ${item.id} is live but not stored`);
    this.valueBytes(item, value);
    if (viewer !== null) read.stored = null;
    return read;
  }

  /** deliveryBytes of a stored value already in hand (a lease patched it): the same scratch. */
  valueBytes(item: LiveItem, value: Uint8Array): DeliveryBytes {
    const read = this.read;
    readStoredItemBytes(value, read);
    read.stored = value;
    return withMemoryMetadata(item, read);
  }

  /**
   * What only the store keeps of the item (StoredOnly: payload, metadata,
   * enqueue instant, `requires`): the enqueue's record until it is durable,
   * the store's otherwise (with metadata a nack set, newer until its write
   * commits). A committed item the store does not hold is a broken invariant
   * (its enqueue committed; only its end deletes it, and that takes it out of
   * memory first).
   */
  bytesOf(item: LiveItem): StoredOnly {
    const unstored = item.unstored;
    if (unstored !== null) return unstored;
    const stored = this.reader.readItem(item.shard, item.key);
    // Messages are built only on failure (these run once per delivery or deadline).
    if (stored === null) assert(false, `engine: item ${item.id} is live but not stored`);
    const metadata = item.extras?.metadata ?? stored.metadata;
    return {
      payload: stored.payload,
      metadata,
      enqueuedAtMs: stored.enqueuedAtMs,
      requires: stored.requires,
      prefers: stored.prefers ?? null,
      preferWaitMs: stored.preferWaitMs ?? 0,
      trace: stored.trace ?? null,
    };
  }

  /** The item as a record for a write (a fresh object: later changes cannot leak into it). */
  recordOf(item: LiveItem): ItemRecord {
    return toRecord(item, this.bytesOf(item));
  }
}
