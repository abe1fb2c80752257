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
import { SplitMap } from "../../lib/split-map.ts";
import { eligibleCacheKindsMax } from "../../limits.ts";
import type { LiveStateName } from "../api.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";
import { type KindSource, noClass, TopsByKind } from "../matching/tops-by-kind.ts";
import { type EligibilitySource, type FitSource, walkTooLong } from "../matching/tops-heap.ts";
import { ReadyHeap, type ReadyItem } from "./ready-heap.ts";
import { Group, Held, type RefillDeadline } from "../groups/group.ts";
import { GroupRotation, type NilIndex } from "../groups/group-rotation.ts";
import type { TopicPolicies } from "../groups/policy-table.ts";
import type { SharedTopicBound } from "../groups/shared-topic-bound.ts";
import type { FitCounts } from "../matching/fit-counts.ts";

/**
 * What a topic reads of an item: it is its own ready-heap node, with the
 * fields of delivery order and placement. Its signature and shard name its
 * heap (Topic.readyHeapOf): no pointer per item.
 */
export interface TopicItem<Self extends TopicItem<Self>> extends ReadyItem<Self> {
  readonly shard: number;
  readonly signatureId: number;
  /** The item's named group (groups/group.ts), or null for the nil group. */
  readonly group: Group<Self> | null;
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

export class Topic<Item extends TopicItem<Item>> implements NilIndex<Item> {
  ready = 0;
  delayed = 0;
  waiting = 0;
  leased = 0;
  dead = 0;
  /** Items in ready heaps (ready and committed): what a dequeue can take now. */
  takeable = 0;
  readonly signatures = new Map<number, SignatureGroup<Item>>();
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
  /** Idempotency key -> the live item holding it (split, so growing it never copies every key at once: lib/split-map.ts). */
  readonly keys = new SplitMap<Item>();
  /** Set while the topic is paused (ops/pause.ts): dequeues skip it, and it lives even when empty. */
  pause: TopicPause<Item> | null = null;
  /**
   * The rotation between its groups (groups/group-rotation.ts), from the
   * first item with a group, or the first group policy, on; null before, and
   * then every ready item sits in the signature heaps below.
   */
  rotation: GroupRotation<Item> | null = null;
  /** Its policies (groups/policy-table.ts), or null when it has none. */
  policies: TopicPolicies | null = null;
  /** Held bits (groups/group.ts's Held) for the topic's own max_leased and rate. */
  held = 0;
  /** The refill deadline scheduled while its own rate holds it back (groups/bounds.ts). */
  refillNode: HeapNode<RefillDeadline> | null = null;
  /** Named groups paused now: the topic lives while any is. */
  pausedGroups = 0;
  /**
   * Cluster mode only, for a topic whose own max_leased binds across nodes
   * (groups/shared-topic-gate.ts): its leased items per shard, made by the
   * gate's first ask and kept by countItem; null everywhere else (no cost).
   */
  leasedByShard: Int32Array | null = null;
  /** Deliveries of its items with `prefers`, by fit (matching/fit-counts.ts), from the first one on. */
  fitCounts: FitCounts | null = null;
  /** Cluster mode: the node's entry for this topic's shared max_leased and rate, cached here by the gate. */
  sharedBound: SharedTopicBound | null = null;

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

  /**
   * The item enters (delta 1) or leaves (-1) a state: the topic's count and
   * its group's. True when a max_leased bound (the topic's or the group's)
   * stopped holding back deliveries: parked dequeues should look again.
   */
  countItem(item: Item, state: LiveStateName, delta: number): boolean {
    this[state] += delta;
    // Cluster mode's per-shard leased count (groups/shared-topic-gate.ts): null unless a gate asked for it.
    if (state === "leased" && this.leasedByShard !== null) this.leasedByShard[item.shard] = (this.leasedByShard[item.shard] ?? 0) + delta;
    const rotation = this.rotation;
    if (rotation === null) return this.leasedBoundChanged(state);
    const group = item.group ?? rotation.nil;
    group.countState(state, delta);
    let released = this.leasedBoundChanged(state);
    if (state === "leased") {
      const capped = group.atMaxLeased();
      const was = (group.held & Held.maxLeased) !== 0;
      if (capped !== was) {
        group.held ^= Held.maxLeased;
        if (rotation.place(group)) released = true;
      }
    }
    return released;
  }

  /** The topic's own max_leased may have changed its hold: true when it released it. */
  private leasedBoundChanged(state: LiveStateName): boolean {
    if (state !== "leased") return false;
    const max = this.policies?.own?.maxLeased ?? null;
    const capped = max !== null && this.leased >= max;
    const was = (this.held & Held.maxLeased) !== 0;
    if (capped === was) return false;
    this.held ^= Held.maxLeased;
    return !capped;
  }

  /** Whether the topic's own bounds hold back every delivery now (its rate is checked by the caller with its clock). */
  get heldBack(): boolean {
    return this.held !== 0;
  }

  /** The named group `name`, made (and the rotation started) when it is new. */
  group(name: string): Group<Item> {
    const rotation = this.startRotation();
    let group = rotation.named.get(name);
    if (group === undefined) {
      group = new Group<Item>(name);
      group.v = rotation.startV();
      rotation.named.set(name, group);
      this.applyPolicy(group);
    }
    return group;
  }

  /** The group's policy (its own or the "*" one) is read again: its bucket, its held bits, its place in the rotation. True when it may deliver again. */
  applyPolicy(group: Group<Item>): boolean {
    group.policy = this.policies?.forGroup(group.name) ?? null;
    // Its bucket followed the policy already (policy-table.ts's rebucket). A dry one is not held here: the
    // next pick meets it (groups/bounds.ts's groupAdmits) and schedules the refill of the rate as it is now.
    let held = group.held & Held.paused;
    if (group.atMaxLeased()) held |= Held.maxLeased;
    const was = group.held;
    group.held = held;
    const entered = (this.rotation as GroupRotation<Item>).place(group);
    return entered || (was !== 0 && held === 0);
  }

  /** The topic's own policy is read again (its max_leased and rate). True when it may deliver again. */
  applyOwnPolicy(): boolean {
    const was = this.held;
    let held = 0;
    const max = this.policies?.own?.maxLeased ?? null;
    if (max !== null && this.leased >= max) held |= Held.maxLeased;
    // As for groups, a dry bucket is met by the next dequeue (groups/bounds.ts's topicOpen), which schedules its refill.
    this.held = held;
    return was !== 0 && held === 0;
  }

  /** Start rotating between groups (the first item with a group, or the first group policy): the items so far form the nil group. */
  startRotation(): GroupRotation<Item> {
    let rotation = this.rotation;
    if (rotation !== null) return rotation;
    const nil = new Group<Item>(null);
    nil.ready = this.ready;
    nil.delayed = this.delayed;
    nil.waiting = this.waiting;
    nil.leased = this.leased;
    nil.dead = this.dead;
    nil.policy = this.policies?.forGroup(null) ?? null;
    rotation = new GroupRotation<Item>(nil, this);
    this.rotation = rotation;
    if (nil.atMaxLeased()) nil.held |= Held.maxLeased;
    rotation.place(nil);
    return rotation;
  }

  /** The best ready item without a group (NilIndex): the shared tops heap's root. */
  nilBest(): Item | undefined {
    if (this.takeableNil() === 0) return undefined;
    const slot = this.tops.sharedHeap().peek();
    return slot < 0 ? undefined : this.slotTops[slot];
  }

  /** The best ready item without a group that `kind` may take (NilIndex). */
  nilPick(eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null {
    return this.pickIndexed(eligibility as KindSource, kind, shardOk);
  }

  /** Takeable items in the signature heaps (every takeable item but those of named groups). */
  private takeableNil(): number {
    return this.takeable - this.takeableGrouped;
  }

  /** Takeable items of named groups (in their groups' heaps). */
  private takeableGrouped = 0;

  /** An item of this signature joins the topic. */
  joinGroup(signatureId: number): void {
    let group = this.signatures.get(signatureId);
    if (group === undefined) {
      group = new SignatureGroup<Item>(signatureId);
      this.signatures.set(signatureId, group);
      this.tops.groupAdded(signatureId);
      this.eligible = [];
      this.eligibleSlots = [];
    }
    group.itemCount++;
  }

  /** An item of this signature leaves the topic. */
  leaveGroup(signatureId: number): void {
    const group = this.signatures.get(signatureId);
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
      this.signatures.delete(signatureId);
      this.tops.groupRemoved(signatureId);
      this.eligible = [];
      this.eligibleSlots = [];
    }
  }

  insertReady(item: Item): void {
    assert(!item.inHeap, "topic: item already in a ready heap");
    const named = item.group;
    if (named !== null) {
      const heap = named.heapFor(item.signatureId);
      heap.insertNode(item);
      this.takeable++;
      this.takeableGrouped++;
      if (heap.peek() === item) {
        const rotation = this.rotation as GroupRotation<Item>;
        rotation.place(named);
        rotation.improved(named, item.signatureId);
      }
      return;
    }
    const group = this.signatures.get(item.signatureId);
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
    const rotation = this.rotation;
    if (rotation !== null) rotation.place(rotation.nil);
  }

  /** The shard heap that holds `item` while it is ready and committed (its group's heap for its shard). */
  readyHeapOf(item: Item): ReadyHeap<Item> {
    const named = item.group;
    return named === null ? this.shardHeapOf(item) : named.heapOf(item.signatureId);
  }

  removeReady(item: Item): void {
    assert(item.inHeap, "topic: item not in a ready heap");
    const named = item.group;
    if (named !== null) {
      const heap = named.heapOf(item.signatureId);
      const wasTop = heap.peek() === item;
      heap.remove(item);
      named.dropIfEmpty(heap, item.signatureId);
      this.takeable--;
      this.takeableGrouped--;
      if (wasTop) (this.rotation as GroupRotation<Item>).place(named);
      return;
    }
    const shardHeap = this.shardHeapOf(item);
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
    const rotation = this.rotation;
    if (rotation !== null && wasTop) rotation.place(rotation.nil);
  }

  /** The signature heap of a ready item without a group. */
  private shardHeapOf(item: Item): ShardHeap<Item> {
    const shardHeap = this.signatures.get(item.signatureId)?.heaps[item.shard];
    assert(shardHeap !== undefined, "topic: no ready heap for the item's signature and shard");
    return shardHeap;
  }

  /** How many of the topic's groups worker kind `kind` may take (its class knows; else cached per kind until the groups change). */
  eligibleGroupCount(eligibility: KindSource, kind: number): number {
    const classCount = this.tops.eligibleCount(eligibility, kind, this.signatures);
    if (classCount !== noClass) return classCount;
    const pairs = this.eligible;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === kind) return pairs[i + 1] as number;
    let count = 0;
    for (const signatureId of this.signatures.keys()) if (eligibility.isEligible(kind, signatureId)) count++;
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
    const rotation = this.rotation;
    if (rotation !== null) return rotation.pick(eligibility, kind, shardOk);
    return this.pickIndexed(eligibility, kind, shardOk);
  }

  /** The best item without a group that `kind` may take, from the signature heaps. */
  private pickIndexed(eligibility: KindSource, kind: number, shardOk: Uint8Array | null): Item | null {
    if (this.takeableNil() === 0) return null;
    let slot = this.tops.best(eligibility, kind, shardOk, this.signatures);
    // Without a class and with preferences somewhere: the shared heap ignores fit, so a scan of the kind's slots.
    if (slot === noClass && eligibility.hasPreferences()) slot = this.tops.bestByFit(eligibility, kind, this.slotsOf(eligibility, kind), shardOk);
    else if (slot === noClass) slot = this.tops.sharedHeap().best(eligibility, kind, shardOk, walkVisitsMax);
    if (slot === walkTooLong) slot = this.tops.sharedHeap().bestAmong(this.slotsOf(eligibility, kind), shardOk);
    if (slot < 0) return null;
    return this.slotTops[slot] as Item;
  }

  /** The TopsHeap slots kind `kind` may take (cached per kind until the groups or their shard heaps change). */
  private slotsOf(eligibility: EligibilitySource, kind: number): Int32Array {
    const pairs = this.eligibleSlots;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === kind) return pairs[i + 1] as Int32Array;
    const slots: number[] = [];
    for (const group of this.signatures.values()) {
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
    this.tops.checkInvariants(this.signatures);
    let takeable = 0;
    let entries = 0;
    let nonEmpty = 0;
    for (const [id, group] of this.signatures) {
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
    assert(takeable + this.takeableGrouped === this.takeable, `topic ${this.name}: takeable ${this.takeable} != ${takeable} + ${this.takeableGrouped}`);
    this.rotation?.checkInvariants();
    assert(this.deadLetters.size === this.dead, `topic ${this.name}: dead count ${this.dead} != ${this.deadLetters.size}`);
    assert(this.takeable <= this.ready, `topic ${this.name}: more takeable than ready`);
  }
}
