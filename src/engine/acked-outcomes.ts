// The acked outcomes kept in memory for outcome_retention_ms, so `get` can
// answer "ended, acked" and `after` can tell an acked dependency from an
// unknown one. An ack is the commonest end and a drain's hot path: one object
// per acked item (as OutcomeTable keeps for the rare cancelled and expired
// ends) cost about 500 bytes of heap each, which under a steady 20,000 acks/s
// grew the heap by gigabytes an hour (issue 10's soak).
//
// Here each namespace collects acked (shard, key) pairs in an open block of
// two typed arrays. A full block, or one open longer than blockSpanMs, is
// closed: sorted by key and stored as runs when that is smaller. Keys rise
// monotonically across shards and a drain acks in roughly key order, so a
// run of consecutive keys whose shards step evenly (an enqueue batch is on one
// shard, step 0; batch-1 enqueues rotate shards, step 1) covers hundreds of
// items in 16 bytes. Where acks come out of order a block falls back to its
// sorted keys and shards, 10 bytes an item. Retention is per block: a block
// is dropped once its newest entry is outcome_retention_ms old, so an outcome
// is kept at least the retention and at most blockSpanMs longer.
//
// Lookups (get, after) are rare next to acks: a scan of the open block and a
// range check per closed block, then a binary search of one block's runs.

import { assert } from "../lib/assert.ts";
import { ackedOutcomeBounds } from "../limits.ts";
import type { ItemKey } from "../storage/store.ts";

/** A block's entries sorted by key: as runs, or as plain keys and shards, whichever is smaller. */
class ClosedBlock {
  constructor(
    readonly minKey: number,
    readonly maxKey: number,
    readonly count: number,
    readonly newestEndedAtMs: number,
    private readonly shardCount: number,
    /** Runs: key start, length, first shard, shard step (mod shardCount). Null in keys mode. */
    private readonly runStarts: Float64Array | null,
    private readonly runLengths: Uint32Array | null,
    private readonly runShards: Uint16Array | null,
    private readonly runSteps: Uint16Array | null,
    /** Keys mode: sorted keys and their shards. Null in runs mode. */
    private readonly keys: Float64Array | null,
    private readonly shards: Uint16Array | null,
  ) {}

  has(shard: number, key: number): boolean {
    if (key < this.minKey || key > this.maxKey) return false;
    const starts = this.runStarts;
    if (starts !== null) {
      const at = lastAtOrBelow(starts, key);
      if (at < 0) return false;
      const offset = key - (starts[at] as number);
      if (offset >= (this.runLengths as Uint32Array)[at]!) return false;
      const first = (this.runShards as Uint16Array)[at]!;
      const step = (this.runSteps as Uint16Array)[at]!;
      return (first + offset * step) % this.shardCount === shard;
    }
    const keys = this.keys as Float64Array;
    const at = lastAtOrBelow(keys, key);
    return at >= 0 && keys[at] === key && (this.shards as Uint16Array)[at] === shard;
  }

  get bytes(): number {
    return this.runStarts !== null ? this.runStarts.length * 16 : this.count * 10;
  }
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

class OpenBlock {
  readonly keys = new Float64Array(ackedOutcomeBounds.blockItemsMax);
  readonly shards = new Uint16Array(ackedOutcomeBounds.blockItemsMax);
  count = 0;
  newestEndedAtMs = 0;
  constructor(readonly openedAtMs: number) {}

  has(shard: number, key: number): boolean {
    const keys = this.keys;
    for (let i = 0; i < this.count; i++) if (keys[i] === key && this.shards[i] === shard) return true;
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

  constructor(
    private readonly shardCount: number,
    private readonly bounds: { blockItemsMax: number; blockSpanMs: number } = ackedOutcomeBounds,
  ) {
    assert(shardCount >= 1 && shardCount <= 65_536, `acked outcomes: ${shardCount} shards do not fit 16 bits`);
    assert(bounds.blockItemsMax <= ackedOutcomeBounds.blockItemsMax, "acked outcomes: block larger than its arrays");
  }

  /** Acked items retained. */
  get size(): number {
    return this.count;
  }

  /** Approximate memory held by closed blocks' arrays and open blocks, in bytes (for stats and the benches). */
  get bytes(): number {
    let total = 0;
    for (const acks of this.namespaces.values()) {
      if (acks.open !== null) total += acks.open.keys.byteLength + acks.open.shards.byteLength;
      for (let i = acks.head; i < acks.closed.length; i++) total += (acks.closed[i] as ClosedBlock).bytes + 64;
    }
    return total;
  }

  add(ns: string, shard: number, key: ItemKey, endedAtMs: number): void {
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
      open = new OpenBlock(endedAtMs);
      acks.open = open;
    }
    open.keys[open.count] = key;
    open.shards[open.count] = shard;
    open.count++;
    if (endedAtMs > open.newestEndedAtMs) open.newestEndedAtMs = endedAtMs;
    this.count++;
  }

  /** Whether the item was acked and is still retained; `ns` null matches any namespace (recovery's lookups). */
  has(ns: string | null, shard: number, key: ItemKey): boolean {
    if (ns !== null) {
      const acks = this.namespaces.get(ns);
      return acks !== undefined && hasIn(acks, shard, key);
    }
    for (const acks of this.namespaces.values()) if (hasIn(acks, shard, key)) return true;
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
    const block = closeBlock(open, this.shardCount);
    // Repeats collapse when the block closes (closeBlock).
    this.count -= open.count - block.count;
    acks.closed.push(block);
    acks.open = null;
  }
}

function hasIn(acks: NamespaceAcks, shard: number, key: number): boolean {
  if (acks.open !== null && acks.open.has(shard, key)) return true;
  for (let i = acks.head; i < acks.closed.length; i++) if ((acks.closed[i] as ClosedBlock).has(shard, key)) return true;
  return false;
}

/** Sort an open block's entries by key and store them as runs or plain keys, whichever is smaller. */
function closeBlock(open: OpenBlock, shardCount: number): ClosedBlock {
  const count = open.count;
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  const keys = open.keys;
  order.sort((a, b) => (keys[a] as number) - (keys[b] as number));
  const sortedKeys = new Float64Array(count);
  const sortedShards = new Uint16Array(count);
  let unique = 0;
  for (let i = 0; i < count; i++) {
    const at = order[i] as number;
    const key = keys[at] as number;
    // An item ends once; a repeat (a log replayed twice) adds nothing.
    if (unique > 0 && sortedKeys[unique - 1] === key) continue;
    sortedKeys[unique] = key;
    sortedShards[unique] = open.shards[at] as number;
    unique++;
  }
  // Runs: consecutive keys whose shards advance by one step.
  const starts: number[] = [];
  const lengths: number[] = [];
  const firstShards: number[] = [];
  const steps: number[] = [];
  for (let i = 0; i < unique; i++) {
    const key = sortedKeys[i] as number;
    const shard = sortedShards[i] as number;
    const last = starts.length - 1;
    if (last >= 0) {
      const length = lengths[last] as number;
      if (key === (starts[last] as number) + length) {
        if (length === 1) {
          steps[last] = (shard - (firstShards[last] as number) + shardCount) % shardCount;
          lengths[last] = 2;
          continue;
        }
        if (((firstShards[last] as number) + length * (steps[last] as number)) % shardCount === shard) {
          lengths[last] = length + 1;
          continue;
        }
      }
    }
    starts.push(key);
    lengths.push(1);
    firstShards.push(shard);
    steps.push(0);
  }
  const minKey = sortedKeys[0] as number;
  const maxKey = sortedKeys[unique - 1] as number;
  if (starts.length * 16 < unique * 10) {
    return new ClosedBlock(
      minKey,
      maxKey,
      unique,
      open.newestEndedAtMs,
      shardCount,
      Float64Array.from(starts),
      Uint32Array.from(lengths),
      Uint16Array.from(firstShards),
      Uint16Array.from(steps),
      null,
      null,
    );
  }
  return new ClosedBlock(minKey, maxKey, unique, open.newestEndedAtMs, shardCount, null, null, null, null, sortedKeys.slice(0, unique), sortedShards.slice(0, unique));
}
