// One eligibility class's heap (tops-by-kind.ts): a binary min-heap of
// records (priority, deliverAtMs, order, slot) in one Float64Array, ordered
// by the slot's best item, with each slot's position in an Int32Array so an
// update is a sift from where the slot sits. The key is copied into the
// record (not read through the slot) so a sift reads adjacent records, not
// one cold key per comparison. No objects per entry, no allocation once grown.

import { assert } from "../../lib/assert.ts";

/** Doubles per record: priority, deliverAtMs, order, slot. */
const stride = 4;
const slotField = 3;

/** Scratch for best()'s walk past unhealthy shards: heap positions, a min-heap by key. */
let frontier = new Int32Array(64);

export class ClassHeap {
  private records = new Float64Array(16 * stride);
  private count = 0;
  /** Slot -> its position in the heap, or -1. */
  private positions: Int32Array;

  constructor(slotCapacity: number) {
    this.positions = new Int32Array(slotCapacity).fill(-1);
  }

  get size(): number {
    return this.count;
  }

  contains(slot: number): boolean {
    return this.positions[slot] !== -1;
  }

  /** The best slot, or -1. */
  peek(): number {
    return this.count === 0 ? -1 : (this.records[slotField] as number);
  }

  /** Adds a slot without ordering it; heapify() orders them all afterwards. */
  append(slot: number, priority: number, deliverAtMs: number, order: number): void {
    this.write(this.claim(slot), slot, priority, deliverAtMs, order);
  }

  heapify(): void {
    for (let at = (this.count >> 1) - 1; at >= 0; at--) this.siftDown(at);
  }

  /** The slot's key changed (or it just got one): insert it, or move it to its place. */
  upsert(slot: number, priority: number, deliverAtMs: number, order: number): void {
    let at = this.positions[slot] as number;
    if (at === -1) at = this.claim(slot);
    this.write(at, slot, priority, deliverAtMs, order);
    this.siftDown(this.siftUp(at));
  }

  remove(slot: number): void {
    const at = this.positions[slot] as number;
    if (at === -1) return;
    this.positions[slot] = -1;
    const last = --this.count;
    if (at === last) return;
    const records = this.records;
    const from = last * stride;
    const to = at * stride;
    records[to] = records[from] as number;
    records[to + 1] = records[from + 1] as number;
    records[to + 2] = records[from + 2] as number;
    const moved = records[from + slotField] as number;
    records[to + slotField] = moved;
    this.positions[moved] = at;
    this.siftDown(this.siftUp(at));
  }

  /**
   * The best slot on a shard marked 1 in `shardOk` (null: every shard), or -1.
   * With every shard healthy this is the root; otherwise a best-first walk
   * that passes only the entries of unhealthy shards.
   */
  best(shards: { shardOf(slot: number): number }, shardOk: Uint8Array | null): number {
    if (this.count === 0) return -1;
    const records = this.records;
    if (shardOk === null) return records[slotField] as number;
    frontier[0] = 0;
    let frontierSize = 1;
    while (frontierSize > 0) {
      const at = frontier[0] as number;
      frontierSize--;
      if (frontierSize > 0) {
        frontier[0] = frontier[frontierSize] as number;
        this.frontierSiftDown(frontierSize);
      }
      const slot = records[at * stride + slotField] as number;
      if (shardOk[shards.shardOf(slot)] === 1) return slot;
      const left = 2 * at + 1;
      if (left >= this.count) continue;
      if (frontierSize + 2 > frontier.length) {
        const grown = new Int32Array(frontier.length * 2);
        grown.set(frontier);
        frontier = grown;
      }
      frontierSize = this.frontierPush(frontierSize, left);
      if (left + 1 < this.count) frontierSize = this.frontierPush(frontierSize, left + 1);
    }
    return -1;
  }

  growSlots(capacity: number): void {
    const positions = new Int32Array(capacity).fill(-1);
    positions.set(this.positions);
    this.positions = positions;
  }

  /** A new position at the end of the heap for `slot`. */
  private claim(slot: number): number {
    if ((this.count + 1) * stride > this.records.length) {
      const grown = new Float64Array(this.records.length * 2);
      grown.set(this.records);
      this.records = grown;
    }
    const at = this.count++;
    this.positions[slot] = at;
    return at;
  }

  private write(at: number, slot: number, priority: number, deliverAtMs: number, order: number): void {
    const base = at * stride;
    this.records[base] = priority;
    this.records[base + 1] = deliverAtMs;
    this.records[base + 2] = order;
    this.records[base + slotField] = slot;
  }

  /** Strict delivery order between the records at two heap positions. */
  private less(a: number, b: number): boolean {
    const records = this.records;
    const baseA = a * stride;
    const baseB = b * stride;
    const pa = records[baseA] as number;
    const pb = records[baseB] as number;
    if (pa !== pb) return pa < pb;
    const da = records[baseA + 1] as number;
    const db = records[baseB + 1] as number;
    if (da !== db) return da < db;
    return (records[baseA + 2] as number) < (records[baseB + 2] as number);
  }

  private swap(a: number, b: number): void {
    const records = this.records;
    const baseA = a * stride;
    const baseB = b * stride;
    for (let i = 0; i < stride; i++) {
      const value = records[baseA + i] as number;
      records[baseA + i] = records[baseB + i] as number;
      records[baseB + i] = value;
    }
    this.positions[records[baseA + slotField] as number] = a;
    this.positions[records[baseB + slotField] as number] = b;
  }

  private siftUp(at: number): number {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(at, parent)) break;
      this.swap(at, parent);
      at = parent;
    }
    return at;
  }

  private siftDown(at: number): void {
    const size = this.count;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) return;
      let child = left;
      if (left + 1 < size && this.less(left + 1, left)) child = left + 1;
      if (!this.less(child, at)) return;
      this.swap(at, child);
      at = child;
    }
  }

  private frontierPush(size: number, heapAt: number): number {
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

  private frontierSiftDown(size: number): void {
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

  /** Checks order and positions, and that each slot's key is the owner's (priority, deliverAtMs, order at slot * keyStride). */
  checkInvariants(keys: Float64Array, keyStride: number): void {
    for (let at = 0; at < this.count; at++) {
      const base = at * stride;
      const slot = this.records[base + slotField] as number;
      assert(this.positions[slot] === at, `class heap: slot ${slot} position is wrong`);
      for (let i = 0; i < 3; i++) assert(this.records[base + i] === keys[slot * keyStride + i], `class heap: slot ${slot} has a stale key`);
      if (at > 0) assert(!this.less(at, (at - 1) >> 1), `class heap: order broken at ${at}`);
    }
    let positioned = 0;
    for (let slot = 0; slot < this.positions.length; slot++) if (this.positions[slot] !== -1) positioned++;
    assert(positioned === this.count, "class heap: positions name slots outside the heap");
  }
}
