// The PostgreSQL store's copy of what is committed, for the shards this
// process serves: each item's encoded value and each outcome's, as PostgreSQL
// holds them. The engine reads items synchronously (a delivery reads its
// payload back), so the values must be at hand; the database stays the
// durable copy and the cache is rebuilt from it whenever a shard is adopted.
// Costs the encoded size of every item in memory (payload included), which
// the LMDB store leaves in the page cache instead (docs/CLUSTER.md).

import { assert } from "../../lib/assert.ts";
import type { ItemKey } from "../store.ts";
import { shardOfId } from "./commit-statements.ts";
import { ShardValues } from "./shard-values.ts";

export class ItemCache {
  /** Per shard: its items' values, or null while the shard is not loaded. */
  private readonly shards: Array<ShardValues | null>;
  private readonly outcomes = new Map<string, Uint8Array>();
  /**
   * Per shard, the highest key it was given, or NaN once a key came below it:
   * while a number, the map's insertion order is key order (a load reads in
   * key order and new keys append), so a shard is walked in key order
   * without a sort (readInKeyOrder).
   */
  private readonly highestKey: number[];

  constructor(shardCount: number) {
    this.shards = Array.from({ length: shardCount }, () => null);
    this.highestKey = Array.from({ length: shardCount }, () => Number.NEGATIVE_INFINITY);
  }

  has(shard: number): boolean {
    return this.shards[shard] !== null && this.shards[shard] !== undefined;
  }

  /** A loaded shard: its items as its load read them (ShardValues.load), and its outcomes. */
  adopt(shard: number, items: ShardValues, outcomes: Map<string, Uint8Array>): void {
    this.checkShard(shard);
    this.shards[shard] = items;
    let highest = Number.NEGATIVE_INFINITY;
    for (const key of items.keys()) highest = key > highest ? key : Number.NaN;
    this.highestKey[shard] = highest;
    for (const [id, value] of outcomes) this.outcomes.set(id, value);
  }

  drop(shard: number): void {
    this.checkShard(shard);
    this.shards[shard] = null;
    for (const id of [...this.outcomes.keys()]) if (shardOfId(id) === shard) this.outcomes.delete(id);
  }

  get(shard: number, key: ItemKey): Uint8Array | undefined {
    this.checkShard(shard);
    return this.shards[shard]?.get(key);
  }

  /** A loaded shard's items in ascending key order; none for a shard not loaded. */
  sortedEntries(shard: number): Array<[ItemKey, Uint8Array]> {
    this.checkShard(shard);
    const items = this.shards[shard];
    if (items === null || items === undefined) return [];
    return [...items.entries()].sort((a, b) => a[0] - b[0]);
  }

  /**
   * A loaded shard's items in ascending key order, each value read in place
   * by `read` (ShardValues.read), lazily: in insertion order when that is key
   * order (no copy, no sort: a shard of a million items is handed to the
   * engine in steps), else sorted first.
   */
  readInKeyOrder<T>(shard: number, read: (key: ItemKey, bytes: Uint8Array, start: number, end: number) => T): Iterable<T> {
    this.checkShard(shard);
    const items = this.shards[shard];
    if (items === null || items === undefined) return [];
    if (!Number.isNaN(this.highestKey[shard])) return items.read(read);
    return readEach(this.sortedEntries(shard), read);
  }

  /** The loaded shard's outcomes. */
  *shardOutcomes(shard: number): Iterable<[string, Uint8Array]> {
    for (const entry of this.outcomes) if (shardOfId(entry[0]) === shard) yield entry;
  }

  /** Items in the loaded shards and outcomes held, counted without copying or sorting. */
  counts(): { items: number; outcomes: number } {
    let items = 0;
    for (const shard of this.shards) if (shard !== null) items += shard.size;
    return { items, outcomes: this.outcomes.size };
  }

  outcomeEntries(): Iterable<[string, Uint8Array]> {
    return this.outcomes.entries();
  }

  /** A committed shard's writes. A shard not loaded (a store that serves only some) keeps nothing. */
  apply(shard: number, writes: Map<ItemKey, Uint8Array | null>): void {
    this.checkShard(shard);
    const items = this.shards[shard];
    if (items === null || items === undefined) return;
    let highest = this.highestKey[shard] as number;
    for (const [key, value] of writes) {
      if (value === null) {
        items.delete(key);
        continue;
      }
      // A new key is appended: key order holds while it is the highest.
      if (items.set(key, value)) highest = key > highest ? key : Number.NaN;
    }
    this.highestKey[shard] = highest;
  }

  /** Committed outcome writes, except those of shards left out of the commit. */
  applyOutcomes(writes: Map<string, Uint8Array | null>, skipped: ReadonlyMap<number, unknown>): void {
    for (const [id, value] of writes) {
      if (skipped.size > 0 && skipped.has(shardOfId(id))) continue;
      if (value === null) this.outcomes.delete(id);
      else this.outcomes.set(id, value);
    }
  }

  private checkShard(shard: number): void {
    // The message only when it fails: a template built on every read was 4% of a drain's CPU.
    if (!(Number.isSafeInteger(shard) && shard >= 0 && shard < this.shards.length)) assert(false, `shard ${shard} out of range`);
  }
}

/** Each sorted entry read as it is walked (an adoption's steps), not all at once. */
function* readEach<T>(entries: Array<[ItemKey, Uint8Array]>, read: (key: ItemKey, bytes: Uint8Array, start: number, end: number) => T): Generator<T> {
  for (const [key, value] of entries) yield read(key, value, 0, value.length);
}
