// A heap of heap tops, for one topic: the engine keeps one ready heap per
// (signature, shard) of a topic (an "entry" here); this heap orders the entries
// by their best item, so a pick walks entries best-first and stops at the
// first one the worker may take (and whose shard takes writes). The walk
// visits about (entries / eligible entries) of them, whatever the number of
// signatures, instead of peeking every eligible entry's heap. It is the
// shared heap of tops-by-kind.ts (which also allocates the slots), walked by
// kinds without an eligibility class of their own.
//
// The heap is one Float64Array of six-double records (the key's three parts
// priority, deliverAtMs and order; slot; signature; shard) in heap order, so a walk near the root reads a few adjacent cache lines per
// topic rather than chasing one object per group and shard (with a million
// items those objects are cold and each costs a cache miss: that, not the
// comparisons, is what a scan pays).
//
// The engine reports every change of an entry's best item: setTop when an
// insert or removal changes it, clearTop when the entry's heap empties.
// Ordering is the delivery order: priority, then deliverAtMs, then enqueue
// order (the item key).

import { assert } from "../../lib/assert.ts";
import { recordLess, recordSlotField, siftRecordDown, siftRecordUp } from "./record-heap.ts";

/** What decides whether a worker may take an entry's items: a Matcher, or anything with its isEligible. */
export interface EligibilitySource {
  isEligible(kind: number, signatureId: number): boolean;
}

/** An EligibilitySource that also knows each kind's fit for a signature's `prefers` (a Matcher). */
export interface FitSource extends EligibilitySource {
  /** The kind's fit for the signature's `prefers` (0 without). */
  fitOf(kind: number, signatureId: number): number;
  /** Whether any signature has `prefers` (while none does, fit is 0 everywhere and picks skip it). */
  hasPreferences(): boolean;
}

/** Doubles per heap record: priority, deliverAtMs, order, slot (record-heap.ts's shared layout and sifts), then signature id, shard. */
const stride = 6;
const priorityField = 0;
const deliverAtField = 1;
const orderField = 2;
const slotField = recordSlotField;
const signatureField = 4;
const shardField = 5;

/** What best() returns when it gave up after visitsMax entries. */
export const walkTooLong = -2;

export class TopsHeap {
  /** Per slot: the entry's signature and shard, while the slot is allocated. */
  private signatures = new Int32Array(8);
  private shards = new Int32Array(8);
  /** Slot -> index in the heap, or -1 when its heap is empty (or the slot is free). */
  private positions = new Int32Array(8).fill(-1);
  private live = new Uint8Array(8);
  /**
   * The binary min-heap itself: one record of `stride` doubles per position,
   * holding the key and what a pick needs to judge the entry, so a walk near
   * the root reads a few adjacent cache lines and nothing else of the topic.
   */
  private records = new Float64Array(8 * stride);
  private heapSize = 0;
  private allocatedSlots = 0;
  private readonly freeSlots: number[] = [];
  /** Scratch for the best-first walk: heap positions, itself a min-heap by key. */
  private frontier = new Int32Array(16);
  private entryCount = 0;

  /** Entries that have a best item (non-empty heaps). */
  get size(): number {
    return this.heapSize;
  }

  /** Entries allocated (empty or not). */
  get entries(): number {
    return this.entryCount;
  }

  /** Registers the heap of (signatureId, shard); returns its slot. It starts empty. */
  addEntry(signatureId: number, shard: number): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.allocatedSlots++;
      if (slot >= this.signatures.length) this.growSlots(slot * 2);
    }
    this.signatures[slot] = signatureId;
    this.shards[slot] = shard;
    this.positions[slot] = -1;
    this.live[slot] = 1;
    this.entryCount++;
    return slot;
  }

  /** Drops an entry whose heap is empty. */
  removeEntry(slot: number): void {
    if (this.live[slot] !== 1) assert(false, `tops heap: slot ${slot} is not an entry`);
    if (this.positions[slot] !== -1) assert(false, `tops heap: removing slot ${slot} while it has a top`);
    this.live[slot] = 0;
    this.entryCount--;
    this.freeSlots.push(slot);
  }

  /** One more than the highest slot ever allocated: slots below it are entries or free. */
  get slotCount(): number {
    return this.allocatedSlots;
  }

  /** Whether the slot is an allocated entry (empty or not). */
  isEntry(slot: number): boolean {
    return this.live[slot] === 1;
  }

  /** Whether the slot's heap has a best item. */
  hasTop(slot: number): boolean {
    return this.positions[slot] !== -1;
  }

  signatureOf(slot: number): number {
    return this.signatures[slot] as number;
  }

  shardOf(slot: number): number {
    return this.shards[slot] as number;
  }

  /** The entry's heap now has this best item (new, or changed). */
  setTop(slot: number, priority: number, deliverAtMs: number, order: number): void {
    if (this.live[slot] !== 1) assert(false, `tops heap: slot ${slot} is not an entry`);
    let at = this.positions[slot] as number;
    if (at === -1) {
      if ((this.heapSize + 1) * stride > this.records.length) this.records = grownFloat64(this.records, this.records.length * 2);
      at = this.heapSize++;
      const base = at * stride;
      this.records[base + slotField] = slot;
      this.records[base + signatureField] = this.signatures[slot] as number;
      this.records[base + shardField] = this.shards[slot] as number;
      this.positions[slot] = at;
    }
    const base = at * stride;
    this.records[base + priorityField] = priority;
    this.records[base + deliverAtField] = deliverAtMs;
    this.records[base + orderField] = order;
    this.siftDown(this.siftUp(at));
  }

  /** Forgets every top (the entries stay): the owner stops maintaining this heap until it refills it with setTop. */
  clearAllTops(): void {
    for (let at = 0; at < this.heapSize; at++) this.positions[this.records[at * stride + slotField] as number] = -1;
    this.heapSize = 0;
  }

  /** The entry's heap is empty. */
  clearTop(slot: number): void {
    const at = this.positions[slot] as number;
    if (at === -1) return;
    this.positions[slot] = -1;
    const last = --this.heapSize;
    if (at === last) return;
    this.records.copyWithin(at * stride, last * stride, last * stride + stride);
    this.positions[this.records[at * stride + slotField] as number] = at;
    this.siftDown(this.siftUp(at));
  }

  /** Whether the slot's recorded best item has this key (for the owner's invariant checks). */
  topIs(slot: number, priority: number, deliverAtMs: number, order: number): boolean {
    const at = this.positions[slot] as number;
    if (at === -1) return false;
    const base = at * stride;
    return this.records[base + priorityField] === priority && this.records[base + deliverAtField] === deliverAtMs && this.records[base + orderField] === order;
  }

  /** The slot with the best item of all, or -1. */
  peek(): number {
    return this.heapSize === 0 ? -1 : (this.records[slotField] as number);
  }

  /**
   * The slot holding the best item that worker kind `kind` may take, on a
   * shard marked 1 in `shardOk` (null: every shard), or -1. Walks entries
   * best-first: a frontier of heap positions ordered by key, starting at the
   * root, each rejected entry adding its two children. Bounded by the number
   * of entries; no recursion, no allocation once the scratch has grown. A
   * topic where the kind may take nothing should be skipped before calling:
   * the walk would visit every entry.
   *
   * The walk visits every entry better than the answer: when a kind's items
   * are drained while other kinds' items wait (better ones), that is many.
   * With `visitsMax` it gives up after that many entries and returns
   * `walkTooLong`; the caller then asks bestAmong() with the kind's slots.
   */
  best(eligibility: EligibilitySource, kind: number, shardOk: Uint8Array | null, visitsMax = Number.POSITIVE_INFINITY): number {
    if (this.heapSize === 0) return -1;
    let visits = 0;
    const records = this.records;
    let frontier = this.frontier;
    frontier[0] = 0;
    let frontierSize = 1;
    while (frontierSize > 0) {
      // Pop the frontier's best heap position.
      const at = frontier[0] as number;
      frontierSize--;
      if (frontierSize > 0) {
        frontier[0] = frontier[frontierSize] as number;
        this.frontierSiftDown(frontier, frontierSize);
      }
      if (++visits > visitsMax) return walkTooLong;
      const base = at * stride;
      if (
        (shardOk === null || shardOk[records[base + shardField] as number] === 1) &&
        eligibility.isEligible(kind, records[base + signatureField] as number)
      ) {
        return records[base + slotField] as number;
      }
      const left = 2 * at + 1;
      if (left >= this.heapSize) continue;
      if (frontierSize + 2 > frontier.length) {
        frontier = grownInt32(frontier, frontier.length * 2);
        this.frontier = frontier;
      }
      frontierSize = this.frontierPush(frontier, frontierSize, left);
      if (left + 1 < this.heapSize) frontierSize = this.frontierPush(frontier, frontierSize, left + 1);
    }
    return -1;
  }

  /**
   * The best of the given slots that has a top, on a shard marked 1 in
   * `shardOk` (null: every shard), or -1: a scan of two typed-array reads per
   * slot, for when the best-first walk would pass too many better entries.
   */
  bestAmong(slots: Int32Array, shardOk: Uint8Array | null): number {
    const positions = this.positions;
    let bestAt = -1;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      const at = positions[slot] as number;
      if (at === -1) continue;
      if (shardOk !== null && shardOk[this.shards[slot] as number] !== 1) continue;
      if (bestAt === -1 || this.less(at, bestAt)) bestAt = at;
    }
    return bestAt === -1 ? -1 : (this.records[bestAt * stride + slotField] as number);
  }

  /** Strict delivery order between the records at two heap positions. */
  private less(a: number, b: number): boolean {
    return recordLess(this.records, stride, a, b);
  }

  /** Moves the record at `at` up to its place; returns where it ended. */
  private siftUp(at: number): number {
    return siftRecordUp(this.records, this.positions, stride, at);
  }

  private siftDown(at: number): void {
    siftRecordDown(this.records, this.positions, stride, this.heapSize, at);
  }

  private frontierPush(frontier: Int32Array, size: number, heapAt: number): number {
    let at = size;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = frontier[parentAt] as number;
      if (!this.less(heapAt, parent)) break;
      frontier[at] = parent;
      at = parentAt;
    }
    frontier[at] = heapAt;
    return size + 1;
  }

  private frontierSiftDown(frontier: Int32Array, size: number): void {
    const moving = frontier[0] as number;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) break;
      let child = left;
      if (left + 1 < size && this.less(frontier[left + 1] as number, frontier[left] as number)) child = left + 1;
      const childAt = frontier[child] as number;
      if (!this.less(childAt, moving)) break;
      frontier[at] = childAt;
      at = child;
    }
    frontier[at] = moving;
  }

  private growSlots(capacity: number): void {
    this.signatures = grownInt32(this.signatures, capacity);
    this.shards = grownInt32(this.shards, capacity);
    const positions = new Int32Array(capacity).fill(-1);
    positions.set(this.positions);
    this.positions = positions;
    const live = new Uint8Array(capacity);
    live.set(this.live);
    this.live = live;
  }

  checkInvariants(): void {
    let entries = 0;
    for (let slot = 0; slot < this.allocatedSlots; slot++) {
      if (this.live[slot] !== 1) {
        assert(this.positions[slot] === -1, `tops heap: free slot ${slot} is in the heap`);
        continue;
      }
      entries++;
      const at = this.positions[slot] as number;
      if (at !== -1) assert(this.records[at * stride + slotField] === slot, `tops heap: slot ${slot} position is wrong`);
    }
    assert(entries === this.entryCount, "tops heap: entry count is wrong");
    for (let at = 0; at < this.heapSize; at++) {
      const base = at * stride;
      const slot = this.records[base + slotField] as number;
      assert(this.live[slot] === 1 && this.positions[slot] === at, `tops heap: heap position ${at} is wrong`);
      assert(this.records[base + signatureField] === this.signatures[slot], `tops heap: position ${at} has a stale signature`);
      assert(this.records[base + shardField] === this.shards[slot], `tops heap: position ${at} has a stale shard`);
      if (at > 0) assert(!this.less(at, (at - 1) >> 1), `tops heap: order broken at ${at}`);
    }
  }
}

function grownInt32(array: Int32Array, capacity: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(capacity);
  grown.set(array);
  return grown;
}

function grownFloat64(array: Float64Array, capacity: number): Float64Array<ArrayBuffer> {
  const grown = new Float64Array(capacity);
  grown.set(array);
  return grown;
}
