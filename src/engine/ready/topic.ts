// One topic of one namespace: per-state counts, its idempotency keys, its dead
// letters (in the order they died), and the ready index. The ready index is a
// ready heap per (signature group, shard), ordered by priority, deliverAtMs
// and enqueue order (ready-heap.ts: pairing heaps in two levels), and per topic the tops of those heaps (TopsByKind, typed
// arrays): one heap over every heap's best item, and one per eligibility
// class (worker kinds that may take the same groups), so a pick peeks at its
// class's root instead of walking past entries it may not take. A kind left
// without a class (all taken) walks the shared heap best-first.
//
// A topic is generic over its items, as the pairing heap is over what it
// orders: it reads only what TopicItem names. An item points back at its
// topic, so state/item.ts, which declares LiveItem, uses Topic<LiveItem>, and
// this file need not import it back.

import { assert } from "../../lib/assert.ts";
import type { HeapNode } from "../../lib/pairing-heap.ts";
import { eligibleCacheKindsMax } from "../../limits.ts";
import type { LiveStateName } from "../api.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";
import { type KindSource, noClass, TopsByKind } from "../matching/tops-by-kind.ts";
import { type EligibilitySource, walkTooLong } from "../matching/tops-heap.ts";
import { ReadyHeap, type ReadyItem } from "./ready-heap.ts";

/**
 * What a topic reads of an item: it is its own ready-heap node, with the
 * fields of delivery order and placement. Its signature and shard name its
 * heap (Topic.readyHeapOf): no pointer per item.
 */
export interface TopicItem<Self extends TopicItem<Self>> extends ReadyItem<Self> {
  readonly shard: number;
  readonly signatureId: number;
}

/** A topic's pause (ops/pause.ts has the ops): until `resume` (untilMs null) or until untilMs. */
export class TopicPause<Item extends TopicItem<Item>> {
  /** The PauseEnd deadline of a timed pause. */
  node: HeapNode<PauseDeadline<Item>> | null = null;
  constructor(
    readonly topic: Topic<Item>,
    public untilMs: number | null,
  ) {}
}

/** The end of a timed pause. */
export type PauseDeadline<Item extends TopicItem<Item>> = Deadline<typeof DeadlineKind.PauseEnd, TopicPause<Item>>;

/** Items of one topic that share a `requires` signature (0 = none), one heap per shard. */
class SignatureGroup<Item extends TopicItem<Item>> {
  /** One heap per shard, created on first use. */
  readonly heaps: Array<ShardHeap<Item> | undefined> = [];
  /**
   * Items in this group's heaps. Summed over the shard heaps when asked
   * (stats, reports): a counter here would be one more cold object for every
   * lease to touch.
   */
  get readyCount(): number {
    let count = 0;
    for (const shardHeap of this.heaps) if (shardHeap !== undefined) count += shardHeap.size;
    return count;
  }
  /** Items of this topic with this signature, in any state (the group lives while > 0). */
  itemCount = 0;
  constructor(readonly signatureId: number) {}
}

/**
 * One shard's heap within a group (the heap itself, so a lease reaches its
 * root with one object fewer), and its entry (slot) in the topic's TopsByKind.
 */
class ShardHeap<Item extends TopicItem<Item>> extends ReadyHeap<Item> {
  constructor(
    readonly shard: number,
    readonly slot: number,
  ) {
    super();
  }
}


/**
 * Entries a pick's best-first walk may visit (16) before it scans the kind's
 * eligible slots instead: a walk of that length reads a few cache lines of
 * the tops heap; past it, better entries the kind may not take are piling up
 * (its own items drained first), and a scan of its slots' keys is cheaper.
 */
const walkVisitsMax = 16;

export class Topic<Item extends TopicItem<Item>> {
  ready = 0;
  delayed = 0;
  waiting = 0;
  leased = 0;
  dead = 0;
  /** Items in ready heaps (ready and committed): what a dequeue can take now. */
  takeable = 0;
  readonly groups = new Map<number, SignatureGroup<Item>>();
  /** The best item of every non-empty shard heap, ordered by delivery order, shared and per eligibility class. */
  readonly tops = new TopsByKind();
  /** TopsHeap slot -> its shard heap. */
  private readonly slotHeaps: Array<ShardHeap<Item> | undefined> = [];
  /**
   * TopsHeap slot -> its heap's best item (undefined while empty): a pick
   * reaches the item in one array read, not through heap and node objects
   * (each a likely cache miss with a million items live).
   */
  private readonly slotTops: Array<Item | undefined> = [];
  /**
   * Pairs (worker kind, how many of the topic's groups it may take), scanned
   * linearly: one small array is fewer cold cache lines than a Map. Cleared
   * whenever the set of groups changes.
   */
  private eligible: number[] = [];
  /**
   * Pairs (worker kind, the TopsHeap slots of every shard heap of every group
   * it may take), built on a kind's first walk that gives up; cleared when
   * the groups or their shard heaps change.
   */
  private eligibleSlots: Array<number | Int32Array> = [];
  readonly deadLetters = new Set<Item>();
  /** Idempotency key -> the live item holding it. */
  readonly keys = new Map<string, Item>();
  /** Set while the topic is paused (ops/pause.ts): dequeues skip it, and it lives even when empty. */
  pause: TopicPause<Item> | null = null;

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
      group = new SignatureGroup<Item>(signatureId);
      this.groups.set(signatureId, group);
      this.tops.groupAdded(signatureId);
      this.eligible = [];
      this.eligibleSlots = [];
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
      for (const shardHeap of group.heaps) {
        if (shardHeap === undefined) continue;
        this.tops.removeEntry(shardHeap.slot);
        this.slotHeaps[shardHeap.slot] = undefined;
        this.slotTops[shardHeap.slot] = undefined;
      }
      this.groups.delete(signatureId);
      this.tops.groupRemoved(signatureId);
      this.eligible = [];
      this.eligibleSlots = [];
    }
  }

  insertReady(item: Item): void {
    assert(!item.inHeap, "topic: item already in a ready heap");
    const group = this.groups.get(item.signatureId);
    assert(group !== undefined, "topic: ready item without its group");
    let shardHeap = group.heaps[item.shard];
    if (shardHeap === undefined) {
      shardHeap = new ShardHeap<Item>(item.shard, this.tops.addEntry(group.signatureId, item.shard));
      group.heaps[item.shard] = shardHeap;
      this.slotHeaps[shardHeap.slot] = shardHeap;
      this.eligibleSlots = [];
    }
    shardHeap.insertNode(item);
    if (shardHeap.peek() === item) this.setTop(shardHeap.slot, item);
    this.takeable++;
  }

  /** The shard heap that holds `item` while it is ready and committed (its group's heap for its shard). */
  readyHeapOf(item: Item): ShardHeap<Item> {
    const shardHeap = this.groups.get(item.signatureId)?.heaps[item.shard];
    assert(shardHeap !== undefined, "topic: no ready heap for the item's signature and shard");
    return shardHeap;
  }

  removeReady(item: Item): void {
    assert(item.inHeap, "topic: item not in a ready heap");
    const shardHeap = this.readyHeapOf(item);
    const wasTop = shardHeap.peek() === item;
    shardHeap.remove(item);
    if (wasTop) {
      const next = shardHeap.peek();
      if (next === undefined) {
        this.tops.clearTop(shardHeap.slot);
        this.slotTops[shardHeap.slot] = undefined;
      } else {
        this.setTop(shardHeap.slot, next);
      }
    }
    this.takeable--;
  }

  /** How many of the topic's groups worker kind `kind` may take (its class knows; else cached per kind until the groups change). */
  eligibleGroupCount(eligibility: KindSource, kind: number): number {
    const classCount = this.tops.eligibleCount(eligibility, kind, this.groups);
    if (classCount !== noClass) return classCount;
    const pairs = this.eligible;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === kind) return pairs[i + 1] as number;
    let count = 0;
    for (const signatureId of this.groups.keys()) if (eligibility.isEligible(kind, signatureId)) count++;
    if (pairs.length >= 2 * eligibleCacheKindsMax) pairs.length = 0;
    pairs.push(kind, count);
    return count;
  }

  /**
   * The best takeable item worker kind `kind` may take, or null. `shardOk`
   * (1 per shard that takes writes) is null when every shard does.
   */
  pickBest(eligibility: KindSource, kind: number, shardOk: Uint8Array | null): Item | null {
    if (this.takeable === 0) return null;
    let slot = this.tops.best(eligibility, kind, shardOk, this.groups);
    if (slot === noClass) slot = this.tops.sharedHeap().best(eligibility, kind, shardOk, walkVisitsMax);
    if (slot === walkTooLong) slot = this.tops.sharedHeap().bestAmong(this.slotsOf(eligibility, kind), shardOk);
    if (slot < 0) return null;
    return this.slotTops[slot] as Item;
  }

  /** The TopsHeap slots kind `kind` may take (cached per kind until the groups or their shard heaps change). */
  private slotsOf(eligibility: EligibilitySource, kind: number): Int32Array {
    const pairs = this.eligibleSlots;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === kind) return pairs[i + 1] as Int32Array;
    const slots: number[] = [];
    for (const group of this.groups.values()) {
      if (!eligibility.isEligible(kind, group.signatureId)) continue;
      for (const shardHeap of group.heaps) if (shardHeap !== undefined) slots.push(shardHeap.slot);
    }
    const list = Int32Array.from(slots);
    if (pairs.length >= 2 * eligibleCacheKindsMax) pairs.length = 0;
    pairs.push(kind, list);
    return list;
  }

  private setTop(slot: number, item: Item): void {
    this.tops.setTop(slot, item.priority, item.deliverAtMs, item.key);
    this.slotTops[slot] = item;
  }

  checkInvariants(): void {
    this.tops.checkInvariants(this.groups);
    let takeable = 0;
    let entries = 0;
    let nonEmpty = 0;
    for (const [id, group] of this.groups) {
      assert(group.signatureId === id && group.itemCount > 0, `topic ${this.name}: bad group ${id}`);
      let inHeaps = 0;
      for (let s = 0; s < group.heaps.length; s++) {
        const shardHeap = group.heaps[s];
        if (shardHeap === undefined) continue;
        entries++;
        shardHeap.checkInvariants();
        inHeaps += shardHeap.size;
        assert(this.slotHeaps[shardHeap.slot] === shardHeap, `topic ${this.name}: shard ${s} slot out of step`);
        assert(this.tops.shared.signatureOf(shardHeap.slot) === id && this.tops.shared.shardOf(shardHeap.slot) === s, `topic ${this.name}: slot names the wrong heap`);
        const top = shardHeap.peek();
        if (top === undefined) continue;
        nonEmpty++;
        assert(this.tops.topIs(shardHeap.slot, top.priority, top.deliverAtMs, top.key), `topic ${this.name}: shard ${s} top not in the tops heap`);
        assert(this.slotTops[shardHeap.slot] === top, `topic ${this.name}: shard ${s} top item out of step`);
      }
      takeable += inHeaps;
    }
    const shared = this.tops.shared;
    assert(shared.entries === entries, `topic ${this.name}: tops heap holds ${shared.entries} entries, ${entries} heaps exist`);
    assert(shared.size === (this.tops.sharedIsLive ? nonEmpty : 0), `topic ${this.name}: tops heap holds ${shared.size} tops, ${nonEmpty} non-empty heaps`);
    assert(takeable === this.takeable, `topic ${this.name}: takeable ${this.takeable} != ${takeable}`);
    assert(this.deadLetters.size === this.dead, `topic ${this.name}: dead count ${this.dead} != ${this.deadLetters.size}`);
    assert(this.takeable <= this.ready, `topic ${this.name}: more takeable than ready`);
  }
}
