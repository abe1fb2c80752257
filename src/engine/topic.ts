// One topic of one namespace: per-state counts, its idempotency keys, its dead
// letters (in the order they died), and the ready index. The ready index is a
// pairing heap per (signature group, shard), ordered by priority, deliverAtMs
// and enqueue order; a pick is a k-way merge over the heap tops of the groups
// a worker may take, skipping shards that cannot take a write now.

import { assert } from "../lib/assert.ts";
import { type HeapNode, PairingHeap } from "../lib/pairing-heap.ts";
import type { LiveStateName } from "./api.ts";
import { type LiveItem, readyLess } from "./item.ts";

/** One shard's heap within a group, and its node in the group's heap of shard tops. */
export class ShardHeap {
  readonly heap = new PairingHeap<LiveItem>(readyLess);
  /** In the group's `tops` heap while the shard heap is not empty. */
  topNode: HeapNode<ShardHeap> | null = null;
  constructor(readonly shard: number) {}
}

const shardTopLess = (a: ShardHeap, b: ShardHeap) => readyLess(a.heap.peek() as LiveItem, b.heap.peek() as LiveItem);

/**
 * Items of one topic that share a `requires` signature (0 = none). The k-way
 * merge over its shard heaps is kept as a small heap of the non-empty shard
 * heaps ordered by their tops (a tournament), so a pick looks at one entry per
 * group instead of one per shard, and a pop repairs it in O(log shards).
 */
export class SignatureGroup {
  /** One heap per shard, created on first use. */
  readonly heaps: Array<ShardHeap | undefined> = [];
  readonly tops = new PairingHeap<ShardHeap>(shardTopLess);
  /** Items in this group's heaps. */
  readyCount = 0;
  /** Items of this topic with this signature, in any state (the group lives while > 0). */
  itemCount = 0;
  constructor(readonly signatureId: number) {}
}

/** Eligible-group lists cached per worker kind; cleared past this many kinds (evicted kinds leave stale entries). */
const eligibleCacheMax = 256;

export class Topic {
  ready = 0;
  delayed = 0;
  waiting = 0;
  leased = 0;
  dead = 0;
  /** Items in ready heaps (ready and committed): what a dequeue can take now. */
  takeable = 0;
  readonly groups = new Map<number, SignatureGroup>();
  /** worker kind -> groups it may take; cleared whenever the set of groups changes. */
  readonly eligible = new Map<number, SignatureGroup[]>();
  readonly deadLetters = new Set<LiveItem>();
  /** Idempotency key -> the live item holding it. */
  readonly keys = new Map<string, LiveItem>();

  constructor(
    readonly ns: string,
    readonly name: string,
  ) {}

  get total(): number {
    return this.ready + this.delayed + this.waiting + this.leased + this.dead;
  }

  count(state: LiveStateName, delta: number): void {
    this[state] += delta;
  }

  /** An item of this signature joins the topic. */
  joinGroup(signatureId: number): void {
    let group = this.groups.get(signatureId);
    if (group === undefined) {
      group = new SignatureGroup(signatureId);
      this.groups.set(signatureId, group);
      this.eligible.clear();
    }
    group.itemCount++;
  }

  /** An item of this signature leaves the topic. */
  leaveGroup(signatureId: number): void {
    const group = this.groups.get(signatureId);
    assert(group !== undefined && group.itemCount > 0, "topic: leaving a missing signature group");
    group.itemCount--;
    if (group.itemCount === 0) {
      assert(group.readyCount === 0, "topic: dropping a group that still has ready items");
      this.groups.delete(signatureId);
      this.eligible.clear();
    }
  }

  insertReady(item: LiveItem): void {
    assert(item.readyNode === null, "topic: item already in a ready heap");
    const group = this.groups.get(item.signatureId);
    assert(group !== undefined, "topic: ready item without its group");
    let shardHeap = group.heaps[item.shard];
    if (shardHeap === undefined) {
      shardHeap = new ShardHeap(item.shard);
      group.heaps[item.shard] = shardHeap;
    }
    item.readyNode = shardHeap.heap.insert(item);
    if (shardHeap.topNode === null) shardHeap.topNode = group.tops.insert(shardHeap);
    else if (shardHeap.heap.peek() === item) group.tops.decreased(shardHeap.topNode);
    group.readyCount++;
    this.takeable++;
  }

  removeReady(item: LiveItem): void {
    const node = item.readyNode;
    assert(node !== null, "topic: item not in a ready heap");
    const group = this.groups.get(item.signatureId) as SignatureGroup;
    const shardHeap = group.heaps[item.shard] as ShardHeap;
    const wasTop = shardHeap.heap.peek() === item;
    shardHeap.heap.remove(node);
    item.readyNode = null;
    const topNode = shardHeap.topNode as HeapNode<ShardHeap>;
    if (shardHeap.heap.size === 0) {
      group.tops.remove(topNode);
      shardHeap.topNode = null;
    } else if (wasTop) {
      group.tops.update(topNode);
    }
    group.readyCount--;
    this.takeable--;
  }

  cachedEligible(kind: number): SignatureGroup[] | undefined {
    return this.eligible.get(kind);
  }

  cacheEligible(kind: number, groups: SignatureGroup[]): void {
    if (this.eligible.size >= eligibleCacheMax) this.eligible.clear();
    this.eligible.set(kind, groups);
  }

  /**
   * The best takeable item among `groups`, or null. When some shard cannot
   * take writes (`allShardsOk` false), its heaps are skipped by scanning every
   * shard top instead of reading the tournament (rare: only during an outage).
   */
  pickBest(groups: readonly SignatureGroup[], allShardsOk: boolean, shardOk: Uint8Array): LiveItem | null {
    let best: LiveItem | null = null;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] as SignatureGroup;
      if (group.readyCount === 0) continue;
      if (allShardsOk) {
        const top = (group.tops.peek() as ShardHeap).heap.peek() as LiveItem;
        if (best === null || readyLess(top, best)) best = top;
        continue;
      }
      const heaps = group.heaps;
      for (let s = 0; s < heaps.length; s++) {
        const shardHeap = heaps[s];
        if (shardHeap === undefined || shardHeap.heap.size === 0 || shardOk[s] !== 1) continue;
        const top = shardHeap.heap.peek() as LiveItem;
        if (best === null || readyLess(top, best)) best = top;
      }
    }
    return best;
  }

  checkInvariants(): void {
    let takeable = 0;
    for (const [id, group] of this.groups) {
      assert(group.signatureId === id && group.itemCount > 0, `topic ${this.name}: bad group ${id}`);
      let inHeaps = 0;
      let nonEmpty = 0;
      for (let s = 0; s < group.heaps.length; s++) {
        const shardHeap = group.heaps[s];
        if (shardHeap === undefined) continue;
        shardHeap.heap.checkInvariants();
        inHeaps += shardHeap.heap.size;
        assert((shardHeap.topNode !== null) === shardHeap.heap.size > 0, `topic ${this.name}: shard ${s} tournament entry out of step`);
        if (shardHeap.heap.size > 0) nonEmpty++;
      }
      group.tops.checkInvariants();
      assert(group.tops.size === nonEmpty, `topic ${this.name}: tournament holds ${group.tops.size} shards, ${nonEmpty} non-empty`);
      assert(inHeaps === group.readyCount, `topic ${this.name}: group ${id} readyCount ${group.readyCount} != ${inHeaps}`);
      takeable += inHeaps;
    }
    assert(takeable === this.takeable, `topic ${this.name}: takeable ${this.takeable} != ${takeable}`);
    assert(this.deadLetters.size === this.dead, `topic ${this.name}: dead count ${this.dead} != ${this.deadLetters.size}`);
    assert(this.takeable <= this.ready, `topic ${this.name}: more takeable than ready`);
  }
}
