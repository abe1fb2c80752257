// Acked items whose records still sit in their shard's sub-database, waiting
// to be deleted in key order (the LMDB store's deferred deletes; lmdb-store.ts
// and docs/STORAGE.md "Acked records are swept").
//
// Why not in the ack's own commit: acks of a priority queue with capability
// matching land all over the key space (ten worker kinds each take their own
// signatures, in priority order), so a commit of 150 acks would rewrite about
// one LMDB leaf page per ack across 16 shard B-trees, and the commit's write
// and fsync would bound the acquisition rate (docs/decisions/004-ack-sweep.md).
// The acked log already makes an ack durable (a key run in one small record),
// so the record's delete can wait: it is deleted later, with neighbours that
// were acked meanwhile, and a page is rewritten once for several of them.
//
// Which keys go, and when: a key is deleted once nothing in its shard below
// it is still live (`floorOf`, the engine's lowest live key per shard; keys
// rise with enqueue order and a shard's records sit in key order, so below
// that floor every page of the shard holds only ended items and is rewritten
// or freed once). Acks of a priority queue end the items of one priority
// first: a record acked among older items of a later priority class waits
// for them, instead of rewriting its page now and again for each neighbour.
// When more than `keepKeys` are waiting (an item that stays, such as a dead
// letter, holds its shard's floor), the lowest beyond that go anyway.
//
// Each shard's queue is a binary min-heap on the item key in two parallel
// typed arrays (key, when acked), so it allocates nothing per ack: 16 bytes
// a waiting key.

import { assert } from "../../lib/assert.ts";
import type { ItemKey } from "../item-key.ts";

/** Keys taken out of the queue for one commit: deleted by it, or put back when it fails. */
export interface SweptKeys {
  shards: number[];
  keys: ItemKey[];
  ackedAtMs: number[];
}

const initialCapacity = 64;

/** One shard's waiting keys. */
class KeyHeap {
  private keys = new Float64Array(initialCapacity);
  private ackedAt = new Float64Array(initialCapacity);
  count = 0;

  constructor(readonly shard: number) {}

  /** The lowest waiting key, or Infinity. */
  get lowestKey(): number {
    return this.count === 0 ? Infinity : (this.keys[0] as number);
  }

  add(key: ItemKey, ackedAtMs: number): void {
    if (this.count === this.keys.length) this.grow();
    let at = this.count++;
    // Sift up.
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if ((this.keys[parent] as number) <= key) break;
      this.move(parent, at);
      at = parent;
    }
    this.keys[at] = key;
    this.ackedAt[at] = ackedAtMs;
  }

  popInto(into: SweptKeys): void {
    into.shards.push(this.shard);
    into.keys.push(this.keys[0] as number);
    into.ackedAtMs.push(this.ackedAt[0] as number);
    const last = --this.count;
    if (last === 0) return;
    this.move(last, 0);
    this.siftDown(0);
  }

  takeAckedBefore(beforeMs: number, into: SweptKeys): void {
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      const ackedAtMs = this.ackedAt[i] as number;
      if (ackedAtMs < beforeMs) {
        into.shards.push(this.shard);
        into.keys.push(this.keys[i] as number);
        into.ackedAtMs.push(ackedAtMs);
        continue;
      }
      this.keys[kept] = this.keys[i] as number;
      this.ackedAt[kept] = ackedAtMs;
      kept++;
    }
    if (kept === this.count) return;
    this.count = kept;
    // Floyd's heapify: the kept entries are no longer in heap order.
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  checkInvariants(): void {
    for (let i = 1; i < this.count; i++) {
      assert((this.keys[(i - 1) >> 1] as number) <= (this.keys[i] as number), `ack sweep heap order broken at ${i} in shard ${this.shard}`);
    }
  }

  private siftDown(from: number): void {
    const key = this.keys[from] as number;
    const ackedAtMs = this.ackedAt[from] as number;
    let at = from;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= this.count) break;
      if (child + 1 < this.count && (this.keys[child + 1] as number) < (this.keys[child] as number)) child++;
      if ((this.keys[child] as number) >= key) break;
      this.move(child, at);
      at = child;
    }
    this.keys[at] = key;
    this.ackedAt[at] = ackedAtMs;
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from] as number;
    this.ackedAt[to] = this.ackedAt[from] as number;
  }

  private grow(): void {
    const capacity = this.keys.length * 2;
    const keys = new Float64Array(capacity);
    keys.set(this.keys);
    const ackedAt = new Float64Array(capacity);
    ackedAt.set(this.ackedAt);
    this.keys = keys;
    this.ackedAt = ackedAt;
  }
}

export class AckSweep {
  /** By shard; a shard's heap exists from its first acked key on. */
  private readonly byShard: Array<KeyHeap | undefined> = [];
  /** The same heaps, densely, for the walks over every shard. */
  private readonly heaps: KeyHeap[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** An acked item whose record is still stored; `ackedAtMs` is the end its acked-log record carries. */
  add(shard: number, key: ItemKey, ackedAtMs: number): void {
    let heap = this.byShard[shard];
    if (heap === undefined) {
      heap = new KeyHeap(shard);
      this.byShard[shard] = heap;
      this.heaps.push(heap);
    }
    heap.add(key, ackedAtMs);
    this.count++;
  }

  /**
   * Every key below its shard's floor (`floorOf(shard)`: the shard's lowest
   * live key, Infinity when none), out of the queue: nothing live is left
   * beneath it, so a commit deletes it with its neighbours. Stops once `into`
   * holds `limit` keys (the rest wait for the next sweep).
   */
  takeBelowFloors(floorOf: (shard: number) => number, into: SweptKeys, limit = Infinity): void {
    for (const heap of this.heaps) {
      if (heap.count === 0) continue;
      const floor = floorOf(heap.shard);
      while (heap.count > 0 && heap.lowestKey < floor && into.keys.length < limit) {
        heap.popInto(into);
        this.count--;
      }
    }
  }

  /** Whether any waiting key lies below its shard's floor: a sweep now would delete something. */
  hasBelowFloors(floorOf: (shard: number) => number): boolean {
    for (const heap of this.heaps) if (heap.count > 0 && heap.lowestKey < floorOf(heap.shard)) return true;
    return false;
  }

  /**
   * The lowest keys beyond the first `keepKeys`, out of the queue: a commit
   * deletes them. Lowest first (across shards), so a commit's deletes share
   * pages. Stops once `into` holds `limit` keys.
   */
  takeLowest(keepKeys: number, into: SweptKeys, limit = Infinity): void {
    while (this.count > keepKeys && into.keys.length < limit) {
      let lowest: KeyHeap | null = null;
      for (const heap of this.heaps) if (heap.count > 0 && (lowest === null || heap.lowestKey < lowest.lowestKey)) lowest = heap;
      assert(lowest !== null, "ack sweep: a count above zero with every heap empty");
      lowest.popInto(into);
      this.count--;
    }
  }

  /**
   * Every key acked before `beforeMs`, out of the queue: the acked-log
   * records a purge removes must not outlive the records of their keys, or a
   * restart would load those items as live again.
   */
  takeAckedBefore(beforeMs: number, into: SweptKeys): void {
    const before = into.keys.length;
    for (const heap of this.heaps) heap.takeAckedBefore(beforeMs, into);
    this.count -= into.keys.length - before;
  }

  /** A committed ack's keys, or a failed commit's sweep put back. */
  addAll(swept: SweptKeys): void {
    for (let i = 0; i < swept.keys.length; i++) this.add(swept.shards[i] as number, swept.keys[i] as number, swept.ackedAtMs[i] as number);
  }

  checkInvariants(): void {
    let count = 0;
    for (const heap of this.heaps) {
      heap.checkInvariants();
      count += heap.count;
    }
    assert(count === this.count, `ack sweep: size ${this.count}, ${count} keys in the heaps`);
  }
}

export function noSweptKeys(): SweptKeys {
  return { shards: [], keys: [], ackedAtMs: [] };
}
