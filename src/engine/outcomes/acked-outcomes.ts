// The acked outcomes kept in memory for outcome_retention_ms, so `get` can
// answer "ended, acked" and `after` can tell an acked dependency from an
// unknown one. An ack is the commonest end and a drain's hot path: one object
// per acked item (as OutcomeTable keeps for the rare cancelled and expired
// ends) would cost about 500 bytes of heap each, which under a steady 20,000
// acks/s grows the heap by gigabytes an hour
// (docs/decisions/003-acked-log.md).
//
// Only keys are kept, not shards: the store allocates keys from one counter
// whatever the shard (group-commit.ts nextKey; in a PostgreSQL cluster, from
// key ranges reserved per open), so a key names one item and its shard adds
// nothing. An id whose shard part does not match the acked key's shard (one
// the server never issued) therefore also answers acked (docs/SEMANTICS.md).
//
// Each namespace collects acked keys in an open block (a typed array that
// grows to blockItemsMax). A full block, or one open longer than blockSpanMs,
// is closed: sorted and stored in the smallest of three forms, runs of
// consecutive keys (varints: gap, length), a bitmap over its key range, or
// plain sorted keys. Keys rise monotonically and a drain acks roughly in key
// order, so a block is runs or a bitmap, a fraction of a byte an item;
// scattered acks fall back to 8 bytes an item. Retention is per block: a
// block is dropped once its newest entry is outcome_retention_ms old, so an
// outcome is kept at least the retention and at most blockSpanMs longer.
//
// Lookups (get, after) are rare next to acks: a scan of the open block and a
// range check per closed block, then a look into one block.

import { assert } from "../../lib/assert.ts";
import { ackedOutcomeBounds } from "../../limits.ts";
import type { ItemKey } from "../../storage/store.ts";

const enum Form {
  Runs,
  Bitmap,
  Keys,
}

/** A block's keys, sorted, in one of three forms (see the header). */
class ClosedBlock {
  constructor(
    readonly minKey: number,
    readonly maxKey: number,
    readonly count: number,
    readonly newestEndedAtMs: number,
    private readonly form: Form,
    /** Runs: varint pairs (gap from the previous run's end, starting at minKey; length - 1). Bitmap: bit i is minKey + i. */
    private readonly bytes: Uint8Array | null,
    /** Keys form: sorted keys. */
    private readonly keys: Float64Array | null,
  ) {}

  has(key: number): boolean {
    if (key < this.minKey || key > this.maxKey) return false;
    if (this.form === Form.Bitmap) {
      const offset = key - this.minKey;
      return (((this.bytes as Uint8Array)[offset >>> 3] as number) & (1 << (offset & 7))) !== 0;
    }
    if (this.form === Form.Runs) return runsHave(this.bytes as Uint8Array, this.minKey, key);
    const keys = this.keys as Float64Array;
    const at = lastAtOrBelow(keys, key);
    return at >= 0 && keys[at] === key;
  }

  get byteLength(): number {
    return this.form === Form.Keys ? this.count * 8 : (this.bytes as Uint8Array).byteLength;
  }
}

function runsHave(runs: Uint8Array, minKey: number, key: number): boolean {
  let at = 0;
  let end = minKey;
  while (at < runs.length) {
    let gap = 0;
    let scale = 1;
    for (;;) {
      const byte = runs[at++] as number;
      gap += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 0x80;
    }
    let length = 0;
    scale = 1;
    for (;;) {
      const byte = runs[at++] as number;
      length += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 0x80;
    }
    const start = end + gap;
    if (key < start) return false;
    end = start + length + 1;
    if (key < end) return true;
  }
  return false;
}

/** Index of the last element <= value in an ascending array, or -1. */
function lastAtOrBelow(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    if ((sorted[mid] as number) <= value) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

/** The open block's first array size: an idle namespace holds 2 KiB, not blockItemsMax keys. */
const openBlockFirstItems = 256;

class OpenBlock {
  keys: Float64Array;
  count = 0;
  newestEndedAtMs = 0;
  constructor(
    readonly openedAtMs: number,
    itemsMax: number,
  ) {
    this.keys = new Float64Array(Math.min(openBlockFirstItems, itemsMax));
  }

  push(key: number, itemsMax: number): void {
    if (this.count === this.keys.length) {
      const grown = new Float64Array(Math.min(itemsMax, this.keys.length * 2));
      grown.set(this.keys);
      this.keys = grown;
    }
    this.keys[this.count++] = key;
  }

  has(key: number): boolean {
    const keys = this.keys;
    for (let i = 0; i < this.count; i++) if (keys[i] === key) return true;
    return false;
  }
}

class NamespaceAcks {
  open: OpenBlock | null = null;
  /** In closing order, so newestEndedAtMs does not decrease along it (the clock is monotonic per process). */
  closed: Array<ClosedBlock | undefined> = [];
  /** closed[0 .. head) are dropped; compacted when half the array is dead. */
  head = 0;
}

export class AckedOutcomes {
  private readonly namespaces = new Map<string, NamespaceAcks>();
  private count = 0;

  constructor(private readonly bounds: { blockItemsMax: number; blockSpanMs: number } = ackedOutcomeBounds) {
    assert(bounds.blockItemsMax >= 1, "acked outcomes: empty blocks");
  }

  /** Acked items retained. */
  get size(): number {
    return this.count;
  }

  /** Approximate memory held by closed blocks' arrays and open blocks, in bytes (for stats and the benches). */
  get bytes(): number {
    let total = 0;
    for (const acks of this.namespaces.values()) {
      if (acks.open !== null) total += acks.open.keys.byteLength;
      for (let i = acks.head; i < acks.closed.length; i++) total += (acks.closed[i] as ClosedBlock).byteLength + 64;
    }
    return total;
  }

  add(ns: string, key: ItemKey, endedAtMs: number): void {
    let acks = this.namespaces.get(ns);
    if (acks === undefined) {
      acks = new NamespaceAcks();
      this.namespaces.set(ns, acks);
    }
    let open = acks.open;
    if (open !== null && (open.count >= this.bounds.blockItemsMax || endedAtMs - open.openedAtMs >= this.bounds.blockSpanMs)) {
      this.close(acks, open);
      open = null;
    }
    if (open === null) {
      open = new OpenBlock(endedAtMs, this.bounds.blockItemsMax);
      acks.open = open;
    }
    open.push(key, this.bounds.blockItemsMax);
    if (endedAtMs > open.newestEndedAtMs) open.newestEndedAtMs = endedAtMs;
    this.count++;
  }

  /** Whether the key was acked and is still retained; `ns` null matches any namespace (recovery's lookups). */
  has(ns: string | null, key: ItemKey): boolean {
    if (ns !== null) {
      const acks = this.namespaces.get(ns);
      return acks !== undefined && hasIn(acks, key);
    }
    for (const acks of this.namespaces.values()) if (hasIn(acks, key)) return true;
    return false;
  }

  /** The newest end of the oldest block, or null when nothing is retained: the next expiry is this plus the retention. */
  oldestNewestEndedAtMs(): number | null {
    let oldest: number | null = null;
    for (const acks of this.namespaces.values()) {
      const first = acks.head < acks.closed.length ? (acks.closed[acks.head] as ClosedBlock).newestEndedAtMs : acks.open?.newestEndedAtMs;
      if (first !== undefined && (oldest === null || first < oldest)) oldest = first;
    }
    return oldest;
  }

  /** Drop every block whose newest entry ended at or before `cutoffMs`; returns how many items were dropped. */
  expire(cutoffMs: number): number {
    let dropped = 0;
    for (const [ns, acks] of this.namespaces) {
      while (acks.head < acks.closed.length && (acks.closed[acks.head] as ClosedBlock).newestEndedAtMs <= cutoffMs) {
        dropped += (acks.closed[acks.head] as ClosedBlock).count;
        acks.closed[acks.head] = undefined;
        acks.head++;
      }
      if (acks.head > 64 && acks.head * 2 > acks.closed.length) {
        acks.closed = acks.closed.slice(acks.head);
        acks.head = 0;
      }
      // Closed blocks all end before the open one starts: it goes only when they have.
      const open = acks.open;
      if (acks.head === acks.closed.length && open !== null && open.newestEndedAtMs <= cutoffMs) {
        dropped += open.count;
        acks.open = null;
      }
      if (acks.open === null && acks.head === acks.closed.length) this.namespaces.delete(ns);
    }
    this.count -= dropped;
    return dropped;
  }

  checkInvariants(): void {
    let total = 0;
    for (const acks of this.namespaces.values()) {
      let previous = -Infinity;
      for (let i = acks.head; i < acks.closed.length; i++) {
        const block = acks.closed[i] as ClosedBlock;
        assert(block.newestEndedAtMs >= previous, "acked outcomes: blocks out of end order");
        assert(block.minKey <= block.maxKey && block.count >= 1, "acked outcomes: bad block bounds");
        assert(block.has(block.minKey) && block.has(block.maxKey), "acked outcomes: a block misses its own bounds");
        previous = block.newestEndedAtMs;
        total += block.count;
      }
      if (acks.open !== null) {
        assert(acks.open.count >= 1 && acks.open.count <= this.bounds.blockItemsMax, "acked outcomes: bad open block");
        total += acks.open.count;
      }
    }
    assert(total === this.count, `acked outcomes: counted ${this.count}, holds ${total}`);
  }

  private close(acks: NamespaceAcks, open: OpenBlock): void {
    const block = closeBlock(open);
    // Repeats collapse when the block closes (closeBlock).
    this.count -= open.count - block.count;
    acks.closed.push(block);
    acks.open = null;
  }
}

function hasIn(acks: NamespaceAcks, key: number): boolean {
  if (acks.open !== null && acks.open.has(key)) return true;
  for (let i = acks.head; i < acks.closed.length; i++) if ((acks.closed[i] as ClosedBlock).has(key)) return true;
  return false;
}

/** Sort an open block's keys and store them as runs, a bitmap or plain keys, whichever is smallest. */
function closeBlock(open: OpenBlock): ClosedBlock {
  const sorted = open.keys.slice(0, open.count).sort();
  // An item ends once; a repeat (a log replayed twice) adds nothing.
  let unique = 0;
  for (let i = 0; i < sorted.length; i++) {
    const key = sorted[i] as number;
    if (unique > 0 && sorted[unique - 1] === key) continue;
    sorted[unique++] = key;
  }
  const minKey = sorted[0] as number;
  const maxKey = sorted[unique - 1] as number;
  const runs: number[] = [];
  let end = minKey;
  for (let i = 0; i < unique; ) {
    const start = sorted[i] as number;
    let length = 1;
    while (i + length < unique && sorted[i + length] === start + length) length++;
    pushVarint(runs, start - end);
    pushVarint(runs, length - 1);
    end = start + length;
    i += length;
  }
  const bitmapBytes = Math.floor((maxKey - minKey) / 8) + 1;
  const keysBytes = unique * 8;
  if (runs.length <= bitmapBytes && runs.length <= keysBytes) {
    return new ClosedBlock(minKey, maxKey, unique, open.newestEndedAtMs, Form.Runs, Uint8Array.from(runs), null);
  }
  if (bitmapBytes <= keysBytes) {
    const bitmap = new Uint8Array(bitmapBytes);
    for (let i = 0; i < unique; i++) {
      const offset = (sorted[i] as number) - minKey;
      bitmap[offset >>> 3] = (bitmap[offset >>> 3] as number) | (1 << (offset & 7));
    }
    return new ClosedBlock(minKey, maxKey, unique, open.newestEndedAtMs, Form.Bitmap, bitmap, null);
  }
  return new ClosedBlock(minKey, maxKey, unique, open.newestEndedAtMs, Form.Keys, null, sorted.slice(0, unique));
}

/** Unsigned LEB128: 7 bits a byte, low first. */
function pushVarint(to: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    to.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  to.push(rest);
}
