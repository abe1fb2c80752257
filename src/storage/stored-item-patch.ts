// Rewriting a stored item's state without decoding it: the storage side of a
// lease, extend, expiry or nack. The engine says what the item's state is and
// which optional fields memory's record of it has (ItemStateFields); this
// reads the stored value, checks that its shape matches, and patches a copy
// in the current record layout (item-record.ts's patchItemState). The
// engine never sees the layout: a record version 4 changes only storage.

import type { Store } from "./store.ts";
import type { ItemKey } from "./store.ts";
import { ItemStatePatch, type ItemValueBytes, itemShapeFlags, readItemValueBytes } from "./item-record.ts";
import { patchItemState } from "./item-record.ts";

/**
 * An item's mutable state as memory holds it (ItemStatePatch's fields), and
 * which optional fields its record has; the patcher turns those into the
 * layout's shape flags.
 */
export class ItemStateFields extends ItemStatePatch {
  hasTtl = false;
  hasDeadReason = false;
  hasAfter = false;
  hasKey = false;
  atMostOnce = false;
}

/** Why a stored value could not be patched. */
export const PatchRefused = {
  /** The store holds no value under the key. */
  missing: 1,
  /** The stored value's optional fields or version differ from memory's: write the whole record. */
  shape: 2,
} as const;
export type PatchRefused = (typeof PatchRefused)[keyof typeof PatchRefused];

export class StoredItemPatcher {
  constructor(private readonly reader: Pick<Store, "readItemBytes">) {}

  /** A copy of the stored value with its state set from `fields`, to be written as it is (WriteSet.putItemBytes). */
  patched(shard: number, key: ItemKey, fields: ItemStateFields): Uint8Array | PatchRefused {
    const value = this.reader.readItemBytes(shard, key);
    if (value === null) return PatchRefused.missing;
    return this.patchedCopy(value, fields);
  }

  /**
   * `value`, a private copy of the stored value read earlier (a deferred
   * lease keeps the one its delivery read), with its state set from `fields`:
   * the patch touches only state fields, which memory owns, so an earlier
   * read patches to the same bytes as a fresh one.
   */
  patchedCopy(value: Uint8Array, fields: ItemStateFields): Uint8Array | PatchRefused {
    fields.shapeFlags = itemShapeFlags(fields.hasTtl, fields.hasDeadReason, false, fields.hasAfter, fields.hasKey, fields.atMostOnce);
    return patchItemState(value, fields) ? value : PatchRefused.shape;
  }
}

/** What readStoredItemBytes reads: payload and metadata (copies) and the enqueue instant. */
export type StoredItemBytes = ItemValueBytes;

/** A stored (or patched) value's payload and metadata, each a copy, and its enqueue instant, into `into` (a caller's scratch: no object per read). */
export function readStoredItemBytes(value: Uint8Array, into: StoredItemBytes): void {
  readItemValueBytes(value, into);
}
