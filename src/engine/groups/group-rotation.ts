// The rotation between a topic's groups (the contract's virtual-time rule):
// among the ready items of the best priority that a worker may take, the next
// delivery comes from the group with the least virtual time v, ties going to
// the group whose best such item comes first in delivery order; a delivery
// adds 1 / weight to its group's v.
//
// The groups that hold ready items and are not held back (by a pause, their
// max_leased or their rate) sit in a binary heap ordered by (best item's
// priority, v, best item's deliverAtMs and key). Its root is the answer for a
// worker that may take every item: one array read per pick, a sift per
// delivery. A worker that may take only some items walks the heap best-first
// and asks each group it meets for its best item that worker may take; since
// a group's heap key is a lower bound of any of its items' keys, the walk
// stops at the first group whose key is not better than the best found.
//
// Where the contract is silent (docs/SCHEDULING.md): "the groups that have
// one" are the groups in this heap, whatever the worker; a group that enters
// it (its first ready item, or a bound or pause lifted) starts at the greater
// of its own v and the least v in the heap (a second heap, by v alone, gives
// that least v); a group with no items is forgotten once its v is not ahead
// of that least v (rate buckets outlive it: policy-table.ts), and a forgotten group comes
// back at the least v (or at the last least v seen when the heap is empty).

import { assert } from "../../lib/assert.ts";
import { type ReadyHeap, type ReadyItem, readyLess } from "../ready/ready-heap.ts";
import type { FitSource } from "../matching/tops-heap.ts";
import type { Group } from "./group.ts";
import { SignatureHeaps } from "./signature-heaps.ts";
import { IndexedHeap } from "../../lib/indexed-heap.ts";

/** What the rotation reads of an item: its order, its signature and shard. */
export interface GroupedItem<Self extends GroupedItem<Self>> extends ReadyItem<Self> {
  readonly shard: number;
  readonly signatureId: number;
}

/** The nil group's ready items live in the topic's signature heaps: the topic answers for them. */
export interface NilIndex<Item> {
  /** The best ready item without a group, or undefined. */
  nilBest(): Item | undefined;
  /** The best ready item without a group that `kind` may take on a shard marked in `shardOk`, or null. */
  nilPick(eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null;
}

export class GroupRotation<Item extends GroupedItem<Item>> {
  /** The named groups with items (or a pause, or a remembered v), by name. */
  readonly named = new Map<string, Group<Item>>();
  /** Groups with takeable items, not held back, by (best priority, v, best deliverAtMs, best key). */
  private readonly order = new RotationOrder<Item>();
  /** The same groups by v alone. */
  private readonly byV = new LeastV<Item>();
  /** The least v when the rotation last held a group, and the group that left it last. */
  private lastLeastV = 0;
  private lastLeft: Group<Item> | null = null;
  /** Groups that could not be forgotten when they emptied (ahead in v). */
  private lingering: Array<Group<Item>> = [];
  /**
   * Per signature, the groups holding ready items of it, for workers that may
   * take only some signatures; kept from the first such worker's pick on
   * (null before: a topic whose workers may take everything never pays for it).
   */
  private signatures: SignatureHeaps<Item> | null = null;
  /** Scratch for the best-first walk: heap positions. */
  private frontier: number[] = [];

  constructor(
    readonly nil: Group<Item>,
    private readonly index: NilIndex<Item>,
  ) {}

  /** Groups in the rotation now. */
  get size(): number {
    return this.order.size;
  }

  /** The least v of the groups in the rotation (the last one seen when none is). */
  leastV(): number {
    const first = this.byV.peek();
    return first === undefined ? this.lastLeastV : first.v;
  }

  /** A new group starts where a forgotten one would come back: at the least v. */
  startV(): number {
    return this.leastV();
  }

  /** The group's best ready item, or undefined. */
  bestOf(group: Group<Item>): Item | undefined {
    if (group === this.nil) return this.index.nilBest();
    let best = group.peek();
    const others = group.others;
    if (others === null) return best;
    for (const heap of others.values()) {
      const top = heap.peek();
      if (top !== undefined && (best === undefined || readyLess(top, best))) best = top;
    }
    return best;
  }

  /**
   * The group's ready items or held bits changed: it enters the rotation,
   * moves within it, or leaves it. Returns true when it entered (its items
   * became deliverable: parked dequeues should look).
   */
  place(group: Group<Item>): boolean {
    const best = group.held === 0 ? this.bestOf(group) : undefined;
    if (best === undefined) {
      if (group.rotationAt >= 0) this.leave(group);
      return false;
    }
    const entering = group.rotationAt < 0;
    const better = entering || best.priority < group.bestPriority || (best.priority === group.bestPriority && (best.deliverAtMs < group.bestDeliverAtMs || (best.deliverAtMs === group.bestDeliverAtMs && best.key < group.bestKey)));
    group.bestPriority = best.priority;
    group.bestDeliverAtMs = best.deliverAtMs;
    group.bestKey = best.key;
    if (entering) {
      const least = this.leastV();
      if (group.v < least) group.v = least;
      this.order.push(group);
      this.byV.push(group);
      if (group !== this.nil) this.refreshEntries(group);
      this.forgetSome();
      return true;
    }
    if (better) this.order.siftUp(group.rotationAt);
    else this.order.siftDown(group.rotationAt);
    return false;
  }

  /** A heap of the group (signature `sig`) has a new best item: its signature entry learns it at once (signature-heaps.ts). */
  improved(group: Group<Item>, sig: number): void {
    const signatures = this.signatures;
    if (signatures !== null && group.rotationAt >= 0) signatures.refresh(group.entryOf(sig), sig);
  }

  /** The group entered the rotation: each of its signature entries is filed at its key. */
  private refreshEntries(group: Group<Item>): void {
    const signatures = this.signatures;
    if (signatures === null) return;
    if (group.sig0 >= 0) signatures.refresh(group, group.sig0);
    const others = group.others;
    if (others !== null) for (const [sig, heap] of others) signatures.refresh(heap, sig);
  }

  /** The signature heaps, made at the first pick that needs them from every group in the rotation. */
  private signatureHeaps(): SignatureHeaps<Item> {
    let signatures = this.signatures;
    if (signatures === null) {
      signatures = new SignatureHeaps<Item>();
      this.signatures = signatures;
      for (const group of this.order.entries) if (group !== this.nil) this.refreshEntries(group);
    }
    return signatures;
  }

  /** A delivery came from `group`: its v moves on by 1 / weight. */
  delivered(group: Group<Item>): void {
    group.v += 1 / group.weight;
    // The delivery itself held the group back (its max_leased) and emptied the rotation: the last least v counts it, as it would after a rate hold.
    if (group.rotationAt < 0 && this.byV.size === 0 && this.lastLeft === group) this.lastLeastV = group.v;
    if (group.rotationAt >= 0) {
      this.order.siftDown(group.rotationAt);
      this.byV.siftDown(group.leastAt);
    }
  }

  /**
   * The item the next delivery to worker kind `kind` takes: the best priority
   * among items it may take (on a shard marked 1 in `shardOk`; null: all),
   * then the least v, then delivery order. Null when there is none.
   */
  pick(eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null {
    const root = this.order.peek();
    if (root === undefined) return null;
    const top = this.bestOf(root) as Item;
    if ((shardOk === null || shardOk[top.shard] === 1) && eligibility.isEligible(kind, top.signatureId)) {
      return eligibility.hasPreferences() ? this.bestFitIn(root, top, eligibility, kind, shardOk, false) : top;
    }
    let best = this.pickBySignature(eligibility, kind, shardOk);
    // The best is on a shard that takes no writes now (rare): the exact walk, which can look past a heap's top.
    if (best !== null && shardOk !== null && shardOk[best.shard] !== 1) best = this.walk(eligibility, kind, shardOk);
    if (best === null || !eligibility.hasPreferences()) return best;
    return this.bestFitIn(this.picked as Group<Item>, best, eligibility, kind, shardOk, true);
  }

  /** The group the last pickBySignature or walk took its item from. */
  private picked: Group<Item> | null = null;

  /**
   * Preferences: within the chosen group, among the items of `item`'s
   * priority that `kind` may take, the one of highest fit (then delivery
   * order). The nil group's own pick (nilPick, `nilPicked`) is fit-ordered
   * already (its class heaps); its best item alone (the fast path) is not.
   */
  private bestFitIn(group: Group<Item>, item: Item, eligibility: FitSource, kind: number, shardOk: Uint8Array | null, nilPicked: boolean): Item {
    if (group === this.nil) return nilPicked ? item : (this.index.nilPick(eligibility, kind, shardOk) ?? item);
    let best = item;
    if (group.sig0 >= 0) best = this.fitterTop(group, group.sig0, best, eligibility, kind, shardOk);
    const others = group.others;
    if (others !== null) for (const [sig, heap] of others) best = this.fitterTop(heap, sig, best, eligibility, kind, shardOk);
    return best;
  }

  /** The top `kind` may take of `heap` (signature `sig`) when it has `best`'s priority and fits better (or as well and comes first); else `best`. */
  private fitterTop(heap: ReadyHeap<Item>, sig: number, best: Item, eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item {
    const top = this.heapBest(heap, sig, eligibility, kind, shardOk);
    if (top === null || top.priority !== best.priority) return best;
    const fit = eligibility.fitOf(kind, sig);
    const bestFit = eligibility.fitOf(kind, best.signatureId);
    return fit > bestFit || (fit === bestFit && readyLess(top, best)) ? top : best;
  }

  /** A worker that may take only some signatures: the best of its signatures' roots and of the nil group's items it may take. */
  private pickBySignature(eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null {
    const entry = this.signatureHeaps().best(eligibility, kind);
    let best: Item | null = null;
    let bestV = 0;
    this.picked = null;
    if (entry !== null) {
      best = entry.entryHeap.peek() as Item;
      bestV = entry.entryGroup.v;
      this.picked = entry.entryGroup as Group<Item>;
    }
    const nil = this.nil;
    if (nil.rotationAt >= 0) {
      const nilItem = this.index.nilPick(eligibility, kind, shardOk);
      if (nilItem !== null && (best === null || itemBefore(nilItem, nil.v, best, bestV))) {
        best = nilItem;
        this.picked = nil;
      }
    }
    return best;
  }

  /** The general pick: best-first over the rotation heap, pruned by the best candidate found. */
  private walk(eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null {
    const order = this.order.entries;
    const frontier = this.frontier;
    frontier.length = 0;
    frontier.push(0);
    this.picked = null;
    let best: Item | null = null;
    let bestV = 0;
    while (frontier.length > 0) {
      const at = this.popFrontier(frontier);
      const group = order[at] as Group<Item>;
      // Every group left in the frontier orders at or after this one: none can beat the best found.
      if (best !== null && !groupBefore(group, best, bestV)) break;
      const candidate = this.bestFor(group, eligibility, kind, shardOk, best, bestV);
      if (candidate !== null && (best === null || itemBefore(candidate, group.v, best, bestV))) {
        best = candidate;
        bestV = group.v;
        this.picked = group;
      }
      const left = 2 * at + 1;
      if (left < order.length) this.pushFrontier(frontier, left);
      if (left + 1 < order.length) this.pushFrontier(frontier, left + 1);
    }
    frontier.length = 0;
    return best;
  }

  /** The group's best item `kind` may take that would beat `bound` (the best found so far, at v `boundV`), or null. */
  private bestFor(group: Group<Item>, eligibility: FitSource, kind: number, shardOk: Uint8Array | null, bound: Item | null, boundV: number): Item | null {
    if (group === this.nil) return this.index.nilPick(eligibility, kind, shardOk);
    // Each heap holds one signature: its top is its best, and the kind may take all of it or none.
    let found = this.heapBest(group, group.sig0, eligibility, kind, shardOk);
    const others = group.others;
    if (others !== null) {
      for (const [sig, heap] of others) {
        const top = this.heapBest(heap, sig, eligibility, kind, shardOk);
        if (top !== null && (found === null || readyLess(top, found))) found = top;
      }
    }
    if (found !== null && bound !== null && !itemBefore(found, group.v, bound, boundV)) return null;
    return found;
  }

  /** The best item of one heap of signature `sig` that `kind` may take on a shard `shardOk` allows, or null. */
  private heapBest(heap: ReadyHeap<Item>, sig: number, eligibility: FitSource, kind: number, shardOk: Uint8Array | null): Item | null {
    const top = heap.peek();
    if (top === undefined || !eligibility.isEligible(kind, sig)) return null;
    if (shardOk === null || shardOk[top.shard] === 1) return top;
    // A shard that takes no writes (rare: a failing shard): the heap's first item on one that does.
    let found: Item | null = null;
    heap.walkInOrder((item) => {
      if (shardOk[item.shard] !== 1) return false;
      found = item;
      return true;
    });
    return found;
  }

  private leave(group: Group<Item>): void {
    this.order.removeAt(group.rotationAt);
    this.byV.removeAt(group.leastAt);
    if (this.byV.size === 0) {
      this.lastLeastV = group.v;
      this.lastLeft = group;
    }
  }

  /** Whether an empty group may be forgotten now without changing any later order. */
  forgettable(group: Group<Item>): boolean {
    return group.items === 0 && group.pause === null && group.rotationAt < 0 && group.v <= this.leastV();
  }

  /** An emptied group that may not be forgotten yet: looked at again later (forgetSome). */
  linger(group: Group<Item>): void {
    this.lingering.push(group);
  }

  /** Forget up to two lingering groups that may go now (called as groups enter: amortised). */
  private forgetSome(): void {
    const lingering = this.lingering;
    for (let n = 0; n < 2 && lingering.length > 0; n++) {
      const group = lingering.shift() as Group<Item>;
      if (this.named.get(group.name as string) !== group) continue;
      if (group.items > 0 || group.pause !== null) continue;
      if (group.v <= this.leastV()) this.named.delete(group.name as string);
      else lingering.push(group);
    }
  }

  /** Drop a named group from the map (it held nothing and may be forgotten). */
  forget(group: Group<Item>): void {
    assert(group.rotationAt < 0, "rotation: forgetting a group in the rotation");
    if (group.name !== null && this.named.get(group.name) === group) this.named.delete(group.name);
  }

  // ---- the walk's frontier: heap positions of the rotation, by its order ----

  private pushFrontier(frontier: number[], heapAt: number): void {
    const order = this.order.entries;
    let at = frontier.length;
    frontier.push(heapAt);
    const group = order[heapAt] as Group<Item>;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = frontier[parent] as number;
      if (!groupLess(group, order[above] as Group<Item>)) break;
      frontier[at] = above;
      at = parent;
    }
    frontier[at] = heapAt;
  }

  private popFrontier(frontier: number[]): number {
    const order = this.order.entries;
    const top = frontier[0] as number;
    const last = frontier.pop() as number;
    const count = frontier.length;
    if (count === 0) return top;
    const lastGroup = order[last] as Group<Item>;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= count) break;
      const right = child + 1;
      if (right < count && groupLess(order[frontier[right] as number] as Group<Item>, order[frontier[child] as number] as Group<Item>)) child = right;
      const below = frontier[child] as number;
      if (!groupLess(order[below] as Group<Item>, lastGroup)) break;
      frontier[at] = below;
      at = child;
    }
    frontier[at] = last;
    return top;
  }

  /** Every group in the rotation (explain, groups, invariants). */
  inRotation(): ReadonlyArray<Group<Item>> {
    return this.order.entries;
  }

  checkInvariants(): void {
    const order = this.order.entries;
    for (let at = 0; at < order.length; at++) {
      const group = order[at] as Group<Item>;
      assert(group.rotationAt === at, "rotation: a group's position is out of step");
      assert(group.held === 0, `rotation: held group ${String(group.name)} in the rotation`);
      const best = this.bestOf(group);
      assert(best !== undefined && best.priority === group.bestPriority && best.key === group.bestKey, `rotation: group ${String(group.name)}'s best is out of step`);
      if (at > 0) assert(!groupLess(group, order[(at - 1) >> 1] as Group<Item>), "rotation: heap order broken");
      assert(this.byV.entries[group.leastAt] === group, "rotation: least-v position out of step");
    }
    assert(this.byV.size === order.length, "rotation: the two heaps hold different groups");
  }
}

/** The rotation's heap: groups by (best priority, v, best item), each keeping its position in rotationAt. */
class RotationOrder<Item extends GroupedItem<Item>> extends IndexedHeap<Group<Item>> {
  protected less(a: Group<Item>, b: Group<Item>): boolean {
    return groupLess(a, b);
  }

  protected setAt(group: Group<Item>, at: number): void {
    group.rotationAt = at;
  }
}

/** The same groups by v alone (the least v a joining group starts at), each keeping its position in leastAt. */
class LeastV<Item extends GroupedItem<Item>> extends IndexedHeap<Group<Item>> {
  protected less(a: Group<Item>, b: Group<Item>): boolean {
    return a.v < b.v;
  }

  protected setAt(group: Group<Item>, at: number): void {
    group.leastAt = at;
  }
}

/** Rotation order of two groups in the heap: best priority, then v, then best item's delivery order. */
function groupLess<Item extends GroupedItem<Item>>(a: Group<Item>, b: Group<Item>): boolean {
  if (a.bestPriority !== b.bestPriority) return a.bestPriority < b.bestPriority;
  if (a.v !== b.v) return a.v < b.v;
  if (a.bestDeliverAtMs !== b.bestDeliverAtMs) return a.bestDeliverAtMs < b.bestDeliverAtMs;
  return a.bestKey < b.bestKey;
}

/** Whether a group's heap key orders before the item `item` of a group at v `v` (it may hold something better). */
function groupBefore<Item extends GroupedItem<Item>>(group: Group<Item>, item: Item, v: number): boolean {
  if (group.bestPriority !== item.priority) return group.bestPriority < item.priority;
  if (group.v !== v) return group.v < v;
  if (group.bestDeliverAtMs !== item.deliverAtMs) return group.bestDeliverAtMs < item.deliverAtMs;
  return group.bestKey < item.key;
}

/** Rotation order of two items, each with its group's v. */
function itemBefore<Item extends GroupedItem<Item>>(a: Item, av: number, b: Item, bv: number): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (av !== bv) return av < bv;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.key < b.key;
}
