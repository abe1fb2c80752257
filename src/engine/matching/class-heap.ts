// One eligibility class's heap (tops-by-kind.ts): a binary min-heap of
// records (priority, deliverAtMs, order, slot) in one Float64Array, with each
// slot's position in an Int32Array (the sift code is record-heap.ts's, shared
// with tops-heap.ts). No objects per entry, no allocation once grown.
//
// The heap is lazy about bad news. A record's key is a lower bound of its
// slot's current best item (the owner keeps the current keys, `state`): when
// a slot's best item gets worse (it was leased) or goes (the slot emptied),
// nothing here changes; the stale record surfaces at the root early and
// best() re-keys or drops it there. Only good news (a better item, or a slot
// that gained one) is applied at once, by a sift up. So a lease costs no heap
// work in the classes that did not pick, and repeated leases of one slot
// cost one fix, paid by the next pick that meets it near the root.
//
// A class whose kinds fit some of the topic's signatures' `prefers` orders
// higher fit first within a priority: each slot may carry an offset (its
// signature's fit for the class, scaled below 1) taken off the priority in
// every key the heap holds or compares, so a pick is still a look at the
// root (docs/decisions/030-preferences.md). Classes without fits keep no
// offsets and pay one null check.

import { assert } from "../../lib/assert.ts";
import { recordLess, recordSlotField, siftRecordDown, siftRecordUp } from "./record-heap.ts";

/** Doubles per record: priority, deliverAtMs, order, slot (record-heap.ts's layout, nothing more). */
const stride = 4;
const slotField = recordSlotField;

/** Strict delivery order: the key (priority, deliverAtMs, order) before the one at `keys[base]`. */
function keyLess(priority: number, deliverAtMs: number, order: number, keys: Float64Array, base: number): boolean {
  const p = keys[base] as number;
  if (priority !== p) return priority < p;
  const d = keys[base + 1] as number;
  if (deliverAtMs !== d) return deliverAtMs < d;
  return order < (keys[base + 2] as number);
}

export class ClassHeap {
  /**
   * The root record, copied into the object: a pick whose root is current
   * reads this object and the slot's key, not the records array (two cold
   * lines fewer). -1 when the heap is empty.
   */
  private rootSlot = -1;
  private rootPriority = 0;
  private rootDeliverAtMs = 0;
  private rootOrder = 0;
  private records = new Float64Array(16 * stride);
  private count = 0;
  /** Slot -> its position in the heap, or -1. */
  private positions: Int32Array;
  /** Slot -> what its priority is lowered by (fit / fitScale), or null while every slot's is 0. */
  private offsets: Float64Array | null = null;

  constructor(slotCapacity: number) {
    this.positions = new Int32Array(slotCapacity).fill(-1);
  }

  get size(): number {
    return this.count;
  }

  contains(slot: number): boolean {
    return this.positions[slot] !== -1;
  }

  /** The slot's items order by priority - offset in this heap (set before the slot gets a record). */
  setOffset(slot: number, offset: number): void {
    let offsets = this.offsets;
    if (offsets === null) {
      if (offset === 0) return;
      offsets = new Float64Array(this.positions.length);
      this.offsets = offsets;
    }
    assert(this.positions[slot] === -1, "class heap: offset of a slot with a record");
    offsets[slot] = offset;
  }

  private offsetOf(slot: number): number {
    const offsets = this.offsets;
    return offsets === null ? 0 : (offsets[slot] as number);
  }

  /** Adds a slot without ordering it; heapify() orders them all afterwards. */
  append(slot: number, priority: number, deliverAtMs: number, order: number): void {
    this.write(this.claim(slot), slot, priority - this.offsetOf(slot), deliverAtMs, order);
  }

  heapify(): void {
    for (let at = (this.count >> 1) - 1; at >= 0; at--) this.siftDown(at);
    this.syncRoot();
  }

  /**
   * The slot has an item with this key, which may be better than its record's
   * (or it has no record): insert it, or lower its record and sift it up.
   */
  lower(slot: number, slotPriority: number, deliverAtMs: number, order: number): void {
    const priority = slotPriority - this.offsetOf(slot);
    let at = this.positions[slot] as number;
    if (at === -1) at = this.claim(slot);
    else if (!keyLess(priority, deliverAtMs, order, this.records, at * stride)) return;
    this.write(at, slot, priority, deliverAtMs, order);
    if (this.siftUp(at) === 0) this.syncRoot();
  }

  /** Drops the slot's record (the slot is being freed). */
  remove(slot: number): void {
    const at = this.positions[slot] as number;
    if (at !== -1) this.removeAt(at);
  }

  private removeAt(at: number): void {
    this.positions[this.records[at * stride + slotField] as number] = -1;
    const last = --this.count;
    if (at === last) {
      if (at === 0) this.syncRoot();
      return;
    }
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
    this.syncRoot();
  }

  /**
   * The best slot that has an item, on a shard marked 1 in `shardOk` (null:
   * every shard), or -1. `state` holds each slot's current key at
   * `slot * stateStride` (priority NaN: no item). Stale records met at the
   * root are fixed first (see the file header). With an unhealthy shard (rare)
   * it scans every record against the current keys instead.
   */
  best(state: Float64Array, stateStride: number, shards: { shardOf(slot: number): number }, shardOk: Uint8Array | null): number {
    if (shardOk !== null) return this.scan(state, stateStride, shards, shardOk);
    for (;;) {
      const slot = this.rootSlot;
      if (slot === -1) return -1;
      const base = slot * stateStride;
      const slotPriority = state[base] as number;
      if (Number.isNaN(slotPriority)) {
        this.removeAt(0);
        continue;
      }
      const priority = slotPriority - this.offsetOf(slot);
      const deliverAtMs = state[base + 1] as number;
      const order = state[base + 2] as number;
      if (this.rootPriority === priority && this.rootDeliverAtMs === deliverAtMs && this.rootOrder === order) return slot;
      // The slot's best item got worse since this record was written: re-key it and let it sink.
      this.write(0, slot, priority, deliverAtMs, order);
      this.siftDown(0);
      this.syncRoot();
    }
  }

  /** best() with some shards unhealthy: the best current key among records on healthy shards. */
  private scan(state: Float64Array, stateStride: number, shards: { shardOf(slot: number): number }, shardOk: Uint8Array): number {
    let best = -1;
    let bestPriority = 0;
    let bestDeliverAtMs = 0;
    let bestOrder = 0;
    for (let at = 0; at < this.count; at++) {
      const slot = this.records[at * stride + slotField] as number;
      const base = slot * stateStride;
      if (Number.isNaN(state[base]) || shardOk[shards.shardOf(slot)] !== 1) continue;
      const priority = (state[base] as number) - this.offsetOf(slot);
      const deliverAtMs = state[base + 1] as number;
      const order = state[base + 2] as number;
      const better = best === -1 || priority < bestPriority || (priority === bestPriority && (deliverAtMs < bestDeliverAtMs || (deliverAtMs === bestDeliverAtMs && order < bestOrder)));
      if (!better) continue;
      best = slot;
      bestPriority = priority;
      bestDeliverAtMs = deliverAtMs;
      bestOrder = order;
    }
    return best;
  }

  growSlots(capacity: number): void {
    const positions = new Int32Array(capacity).fill(-1);
    positions.set(this.positions);
    this.positions = positions;
    if (this.offsets !== null) {
      const offsets = new Float64Array(capacity);
      offsets.set(this.offsets);
      this.offsets = offsets;
    }
  }

  private syncRoot(): void {
    if (this.count === 0) {
      this.rootSlot = -1;
      return;
    }
    const records = this.records;
    this.rootPriority = records[0] as number;
    this.rootDeliverAtMs = records[1] as number;
    this.rootOrder = records[2] as number;
    this.rootSlot = records[slotField] as number;
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
    return recordLess(this.records, stride, a, b);
  }

  private siftUp(at: number): number {
    return siftRecordUp(this.records, this.positions, stride, at);
  }

  private siftDown(at: number): void {
    siftRecordDown(this.records, this.positions, stride, this.count, at);
  }

  /**
   * Checks order and positions, and that every record's key is a lower bound
   * of its slot's current key in `state` (slots without an item excepted).
   */
  checkInvariants(state: Float64Array, stateStride: number): void {
    for (let at = 0; at < this.count; at++) {
      const base = at * stride;
      const slot = this.records[base + slotField] as number;
      assert(this.positions[slot] === at, `class heap: slot ${slot} position is wrong`);
      const current = slot * stateStride;
      if (!Number.isNaN(state[current])) {
        const priority = (state[current] as number) - this.offsetOf(slot);
        const above = keyLess(priority, state[current + 1] as number, state[current + 2] as number, this.records, base);
        assert(!above, `class heap: slot ${slot} has a record worse than its item`);
      }
      if (at > 0) assert(!this.less(at, (at - 1) >> 1), `class heap: order broken at ${at}`);
    }
    if (this.count === 0) assert(this.rootSlot === -1, "class heap: an empty heap names a root");
    else {
      const r = this.records;
      const same = this.rootSlot === r[slotField] && this.rootPriority === r[0] && this.rootDeliverAtMs === r[1] && this.rootOrder === r[2];
      assert(same, "class heap: the root copy is stale");
    }
    let positioned = 0;
    for (let slot = 0; slot < this.positions.length; slot++) if (this.positions[slot] !== -1) positioned++;
    assert(positioned === this.count, "class heap: positions name slots outside the heap");
  }
}
