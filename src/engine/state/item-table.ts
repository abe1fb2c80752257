// Every live item by id, for lookups by id (ack, get, cancel, dependencies).
//
// Memory is why this is not a Map<string, LiveItem>: with a million items a
// string-keyed Map cost about 150 bytes per item and a number-keyed one about
// 55. Item keys come from one counter, global across shards and monotonic
// across restarts, and recovery loads each shard in key order, so every shard
// receives its keys in increasing order: the table keeps, per shard, a sorted
// array of keys beside an array of items (16 bytes per item) and finds a key
// by binary search. A removed item leaves a hole (undefined) that keeps its
// key for the search; a shard's arrays are compacted once holes outnumber
// items, so each removal costs O(1) amortized.

import { assert } from "../../lib/assert.ts";
import { parseId } from "./ids.ts";
import type { LiveItem } from "./item.ts";

/** Below this many slots a shard is never compacted (holes are cheaper than the copy). */
const compactSlotsMin = 64;

class ShardItems {
  /** Keys in increasing order, one per slot (holes keep theirs, so the search still works). */
  keys: number[] = [];
  /** The item in each slot, undefined for a hole. */
  items: Array<LiveItem | undefined> = [];
  holes = 0;
  /** Every slot below this one is a hole (the lowest live key's slot, or the length when none). */
  firstLive = 0;

  /** Move firstLive past holes, after the slot it named was emptied. */
  advanceFirstLive(): void {
    const items = this.items;
    let at = this.firstLive;
    while (at < items.length && items[at] === undefined) at++;
    this.firstLive = at;
  }

  /**
   * The slot holding `key`, or -1. Keys come from one counter, so a shard's
   * are spread about evenly between its first and last: the search starts at
   * the key's proportional place and gallops outward to a bracket before
   * halving it. An ack of a random-priority delivery looks up a key far from
   * the last one, and a plain binary search missed cache on most of its
   * steps; this finds it in one or two misses, and any spread of keys (a
   * cluster node's key ranges) still costs at most about twice log n steps
   * (docs/decisions/040-item-lookup-by-guess.md).
   */
  find(key: number): number {
    const keys = this.keys;
    const last = keys.length - 1;
    if (last < 0) return -1;
    const low = keys[0] as number;
    const high = keys[last] as number;
    if (key < low || key > high) return -1;
    const guess = high === low ? 0 : Math.floor(((key - low) / (high - low)) * last);
    const at = keys[guess] as number;
    if (at === key) return guess;
    let lo: number;
    let hi: number;
    if (at < key) {
      // keys[guess] < key: gallop up until a key is >= key.
      let step = 1;
      lo = guess + 1;
      hi = guess + 1;
      while (hi <= last && (keys[hi] as number) < key) {
        lo = hi + 1;
        step <<= 1;
        hi = guess + step;
      }
      if (hi > last) hi = last;
    } else {
      let step = 1;
      hi = guess - 1;
      lo = guess - 1;
      while (lo >= 0 && (keys[lo] as number) > key) {
        hi = lo - 1;
        step <<= 1;
        lo = guess - step;
      }
      if (lo < 0) lo = 0;
    }
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const k = keys[mid] as number;
      if (k === key) return mid;
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The first slot whose key is >= key (keys.length when none). */
  lowerBound(key: number): number {
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((keys[mid] as number) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  compact(): void {
    const keys = this.keys;
    const items = this.items;
    let to = 0;
    for (let from = 0; from < items.length; from++) {
      const item = items[from];
      if (item === undefined) continue;
      keys[to] = keys[from] as number;
      items[to] = item;
      to++;
    }
    keys.length = to;
    items.length = to;
    this.holes = 0;
    this.firstLive = 0;
  }
}

/** What others may read of the item table (ItemStates.items): lookups, counts and walks, no changes. */
export type ReadonlyItemTable = Pick<ItemTable, "size" | "get" | "getByKey" | "holds" | "lowestKey" | "shardCount" | "shardSlots" | "values" | "entries" | typeof Symbol.iterator | "checkInvariants">;

export class ItemTable {
  private readonly shards: ShardItems[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The live item with this id, or undefined (a malformed id is simply missing). */
  get(id: string): LiveItem | undefined {
    const parsed = parseId(id);
    return parsed === null ? undefined : this.getByKey(parsed.shard, parsed.key);
  }

  /** The live item under (shard, key), or undefined. */
  getByKey(shard: number, key: number): LiveItem | undefined {
    const items = this.shards[shard];
    if (items === undefined) return undefined;
    const slot = items.find(key);
    return slot < 0 ? undefined : items.items[slot];
  }

  /** Whether this very item is the one filed under its id. */
  holds(item: LiveItem): boolean {
    const shard = this.shards[item.shard];
    if (shard === undefined) return false;
    const slot = shard.find(item.key);
    return slot >= 0 && shard.items[slot] === item;
  }

  /**
   * File a new item. On a single node its key is above every key its shard
   * has held (keys only grow): an append. In cluster mode each node hands out
   * keys from a range of its own, so a node that adopted a shard from a node
   * with a higher range files its own, lower keys among them: a sorted insert,
   * O(n) in the shard's items (docs/CLUSTER.md, "Limits").
   */
  add(item: LiveItem): void {
    let shard = this.shards[item.shard];
    if (shard === undefined) {
      while (this.shards.length <= item.shard) this.shards.push(new ShardItems());
      shard = this.shards[item.shard] as ShardItems;
    }
    const last = shard.keys.length === 0 ? -1 : (shard.keys[shard.keys.length - 1] as number);
    if (item.key > last) {
      shard.keys.push(item.key);
      shard.items.push(item);
    } else {
      const at = shard.lowerBound(item.key);
      // The message is built only on failure.
      if (shard.keys[at] === item.key) assert(false, `item table: key ${item.key} filed twice in shard ${item.shard}`);
      shard.keys.splice(at, 0, item.key);
      shard.items.splice(at, 0, item);
      // Slots below firstLive are holes: an item filed at or below it is the new lowest.
      if (at <= shard.firstLive) shard.firstLive = at;
    }
    this.count++;
  }

  /** Remove the item if it is the one filed under its id. */
  delete(item: LiveItem): void {
    const shard = this.shards[item.shard];
    if (shard === undefined) return;
    const slot = shard.find(item.key);
    if (slot < 0 || shard.items[slot] !== item) return;
    shard.items[slot] = undefined;
    shard.holes++;
    this.count--;
    const slots = shard.items.length;
    if (slot === slots - 1) {
      // Trim trailing holes at once: the newest items end first in a busy queue too.
      let end = slots - 1;
      while (end >= 0 && shard.items[end] === undefined) end--;
      shard.holes -= slots - 1 - end;
      shard.items.length = end + 1;
      shard.keys.length = end + 1;
      if (shard.firstLive > end + 1) shard.firstLive = end + 1;
    } else if (slots >= compactSlotsMin && shard.holes * 2 > slots) {
      shard.compact();
    }
    if (slot === shard.firstLive) shard.advanceFirstLive();
  }

  /**
   * The shard's lowest live key, Infinity when it holds none. The LMDB store
   * deletes acked records below it (storage/lmdb/ack-sweep.ts). O(1)
   * amortized: the first live slot only moves up between compactions.
   */
  lowestKey(shard: number): number {
    const items = this.shards[shard];
    if (items === undefined || items.firstLive >= items.keys.length) return Infinity;
    return items.keys[items.firstLive] as number;
  }

  /** Shards that have held items (the highest such shard + 1). */
  get shardCount(): number {
    return this.shards.length;
  }

  /**
   * One shard's slots, read only, for a walk in key order (engine/reads/list.ts):
   * keys ascend; an undefined item is a hole. Null for a shard that never
   * held an item. Valid until the table next changes.
   */
  shardSlots(shard: number): { readonly keys: readonly number[]; readonly items: ReadonlyArray<LiveItem | undefined> } | null {
    return this.shards[shard] ?? null;
  }

  *values(): IterableIterator<LiveItem> {
    for (const shard of this.shards) {
      for (const item of shard.items) if (item !== undefined) yield item;
    }
  }

  /** [id, item] pairs, for invariant checks (builds every id string). */
  *entries(): IterableIterator<[string, LiveItem]> {
    for (const item of this.values()) yield [item.id, item];
  }

  [Symbol.iterator](): IterableIterator<[string, LiveItem]> {
    return this.entries();
  }

  /** Slot bookkeeping agrees with contents (tests). */
  checkInvariants(): void {
    let count = 0;
    for (const shard of this.shards) {
      assert(shard.keys.length === shard.items.length, "item table: keys and items out of step");
      let holes = 0;
      for (let slot = 0; slot < shard.items.length; slot++) {
        if (slot > 0) assert((shard.keys[slot - 1] as number) < (shard.keys[slot] as number), "item table: keys not increasing");
        const item = shard.items[slot];
        if (item === undefined) holes++;
        else {
          assert(item.key === shard.keys[slot], "item table: item under the wrong key");
          count++;
        }
      }
      assert(holes === shard.holes, `item table: ${shard.holes} holes counted, ${holes} found`);
      let firstLive = 0;
      while (firstLive < shard.items.length && shard.items[firstLive] === undefined) firstLive++;
      assert(shard.firstLive === firstLive, `item table: first live slot ${shard.firstLive}, found ${firstLive}`);
    }
    assert(count === this.count, `item table: size ${this.count}, ${count} items found`);
  }
}
