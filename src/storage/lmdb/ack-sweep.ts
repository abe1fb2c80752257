// Acked items whose records still sit in their shard's sub-database, waiting
// to be deleted in key order (the LMDB store's deferred deletes; lmdb-store.ts
// and docs/STORAGE.md "Acked records are swept").
//
// Why: an ack used to delete its record in the ack's own commit. Acks of a
// priority queue with capability matching land all over the key space (ten
// worker kinds each take their own signatures, in priority order), so a
// commit of 150 acks rewrote about one LMDB leaf page per ack across 16 shard
// B-trees, and the commit's write and fsync bounded the acquisition rate.
// The acked log already makes an ack durable (a key run in one small record),
// so the record's delete can wait: it is deleted later, with neighbours that
// were acked meanwhile, and a page is rewritten once for several of them.
//
// The queue is a binary min-heap on the item key in three parallel typed
// arrays (key, shard, when acked), so it allocates nothing per ack; it keeps
// at most `lagKeys` keys waiting between commits, plus one commit's acks.

import { assert } from "../../lib/assert.ts";
import type { ItemKey } from "../item-key.ts";

/** Keys taken out of the queue for one commit: deleted by it, or put back when it fails. */
export interface SweptKeys {
  shards: number[];
  keys: ItemKey[];
  ackedAtMs: number[];
}

const initialCapacity = 1024;

export class AckSweep {
  private keys = new Float64Array(initialCapacity);
  private shards = new Uint16Array(initialCapacity);
  private ackedAt = new Float64Array(initialCapacity);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** An acked item whose record is still stored; `ackedAtMs` is the end its acked-log record carries. */
  add(shard: number, key: ItemKey, ackedAtMs: number): void {
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
    this.shards[at] = shard;
    this.ackedAt[at] = ackedAtMs;
  }

  /**
   * The lowest keys beyond the first `keepKeys`, out of the queue: a commit
   * deletes them. Lowest first, so a commit's deletes share pages.
   */
  takeLowest(keepKeys: number, into: SweptKeys): void {
    while (this.count > keepKeys) this.popInto(into);
  }

  /**
   * Every key acked before `beforeMs`, out of the queue: the acked-log
   * records a purge removes must not outlive the records of their keys, or a
   * restart would load those items as live again.
   */
  takeAckedBefore(beforeMs: number, into: SweptKeys): void {
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      const ackedAtMs = this.ackedAt[i] as number;
      if (ackedAtMs < beforeMs) {
        into.shards.push(this.shards[i] as number);
        into.keys.push(this.keys[i] as number);
        into.ackedAtMs.push(ackedAtMs);
        continue;
      }
      this.keys[kept] = this.keys[i] as number;
      this.shards[kept] = this.shards[i] as number;
      this.ackedAt[kept] = ackedAtMs;
      kept++;
    }
    if (kept === this.count) return;
    this.count = kept;
    // Floyd's heapify: the kept entries are no longer in heap order.
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** A committed ack's keys, or a failed commit's sweep put back. */
  addAll(swept: SweptKeys): void {
    for (let i = 0; i < swept.keys.length; i++) this.add(swept.shards[i] as number, swept.keys[i] as number, swept.ackedAtMs[i] as number);
  }

  checkInvariants(): void {
    for (let i = 1; i < this.count; i++) {
      assert((this.keys[(i - 1) >> 1] as number) <= (this.keys[i] as number), `ack sweep heap order broken at ${i}`);
    }
  }

  private popInto(into: SweptKeys): void {
    into.shards.push(this.shards[0] as number);
    into.keys.push(this.keys[0] as number);
    into.ackedAtMs.push(this.ackedAt[0] as number);
    const last = --this.count;
    if (last === 0) return;
    this.move(last, 0);
    this.siftDown(0);
  }

  private siftDown(from: number): void {
    const key = this.keys[from] as number;
    const shard = this.shards[from] as number;
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
    this.shards[at] = shard;
    this.ackedAt[at] = ackedAtMs;
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from] as number;
    this.shards[to] = this.shards[from] as number;
    this.ackedAt[to] = this.ackedAt[from] as number;
  }

  private grow(): void {
    const capacity = this.keys.length * 2;
    const keys = new Float64Array(capacity);
    keys.set(this.keys);
    const shards = new Uint16Array(capacity);
    shards.set(this.shards);
    const ackedAt = new Float64Array(capacity);
    ackedAt.set(this.ackedAt);
    this.keys = keys;
    this.shards = shards;
    this.ackedAt = ackedAt;
  }
}

export function noSweptKeys(): SweptKeys {
  return { shards: [], keys: [], ackedAtMs: [] };
}
