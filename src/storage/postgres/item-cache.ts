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

export class ItemCache {
  /** Per shard: its items' values, or null while the shard is not loaded. */
  private readonly shards: Array<Map<ItemKey, Uint8Array> | null>;
  private readonly outcomes = new Map<string, Uint8Array>();

  constructor(shardCount: number) {
    this.shards = Array.from({ length: shardCount }, () => null);
  }

  has(shard: number): boolean {
    return this.shards[shard] !== null && this.shards[shard] !== undefined;
  }

  adopt(shard: number, items: Map<ItemKey, Uint8Array>, outcomes: Map<string, Uint8Array>): void {
    this.checkShard(shard);
    this.shards[shard] = items;
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
    for (const [key, value] of writes) {
      if (value === null) items.delete(key);
      else items.set(key, value);
    }
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
    assert(Number.isSafeInteger(shard) && shard >= 0 && shard < this.shards.length, `shard ${shard} out of range`);
  }
}
