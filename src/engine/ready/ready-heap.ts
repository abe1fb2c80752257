// One ready index: the ready items of one (signature group, shard) of a
// topic, in delivery order (priority, then deliverAtMs, then enqueue order).
//
// A small heap is one pairing heap over its items. A large one (past
// readyHeapLevels.fromItems) is two levels of pairing heaps: a heap of
// priority levels, and in each level a heap of its items. Why not one heap
// over every item: a pairing heap's pop
// melds about log n of the popped root's children, and each meld reads two
// items' order fields. With a million items at random priorities those items
// lie all over memory, so a pop is a few dozen cache misses (a few µs); items
// of one priority are enqueued in order, so a level's heap pops the way a FIFO
// heap does (its children lie in allocation order), and the level heap holds
// one small node per priority in use, which stays in cache
// (docs/decisions/027-priority-levels.md). The cost: a level object per
// priority in use, about 110 bytes with its map entry; a workload that gives
// every item of a large heap its own priority pays that per item. Small heaps
// (a topic spread over many signatures and shards) stay in cache as one heap,
// where a level per item would only add a step.
//
// Items are their own inner-heap nodes (intrusive), so a lease reaches its
// item's heap without a node object.

import { assert } from "../../lib/assert.ts";
import { type HeapLinks, IntrusiveHeapNode, PairingHeap } from "../../lib/pairing-heap.ts";
import { readyHeapLevels } from "../../limits.ts";
import type { ItemKey } from "../../storage/item-key.ts";

/** The fields of delivery order. */
export interface DeliveryOrdered {
  readonly priority: number;
  readonly deliverAtMs: number;
  readonly key: ItemKey;
}

/** Delivery order: priority, then deliverAtMs, then enqueue order (keys are global and monotonic). */
export function readyLess(a: DeliveryOrdered, b: DeliveryOrdered): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.key < b.key;
}

/** What a ready heap reads of an item: its own node, and the fields of delivery order. */
export interface ReadyItem<Self extends ReadyItem<Self>> extends HeapLinks<Self>, DeliveryOrdered {}

/** Within one priority: deliverAtMs, then enqueue order. */
function samePriorityLess(a: DeliveryOrdered, b: DeliveryOrdered): boolean {
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.key < b.key;
}

/** The items of one priority: a node of the level heap holding the heap of its items. */
class PriorityLevel<Item extends ReadyItem<Item>> extends IntrusiveHeapNode<PriorityLevel<Item>> {
  readonly items = new PairingHeap<Item>(samePriorityLess);
  constructor(readonly priority: number) {
    super();
  }
}

/** Candidates nextKeys weighs at once (64): a level's root may have gathered every later item as a child. */
const frontierMax = 64;

/** nextKeys's frontier: a binary min-heap in an array, by samePriorityLess. */
function pushFrontier<Item extends ReadyItem<Item>>(heap: Array<HeapLinks<Item>>, node: HeapLinks<Item>, less: (a: Item, b: Item) => boolean): void {
  let at = heap.length;
  heap.push(node);
  while (at > 0) {
    const parent = (at - 1) >> 1;
    const above = heap[parent] as HeapLinks<Item>;
    if (!less(node.value, above.value)) break;
    heap[at] = above;
    at = parent;
  }
  heap[at] = node;
}

function popFrontier<Item extends ReadyItem<Item>>(heap: Array<HeapLinks<Item>>, less: (a: Item, b: Item) => boolean): HeapLinks<Item> {
  const top = heap[0] as HeapLinks<Item>;
  const last = heap.pop() as HeapLinks<Item>;
  const count = heap.length;
  if (count === 0) return top;
  let at = 0;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= count) break;
    const right = child + 1;
    if (right < count && less((heap[right] as HeapLinks<Item>).value, (heap[child] as HeapLinks<Item>).value)) child = right;
    const below = heap[child] as HeapLinks<Item>;
    if (!less(below.value, last.value)) break;
    heap[at] = below;
    at = child;
  }
  heap[at] = last;
  return top;
}

const levelLess = <Item extends ReadyItem<Item>>(a: PriorityLevel<Item>, b: PriorityLevel<Item>): boolean => a.priority < b.priority;

/** A large heap's levels: the heap of priority levels, and each level by its priority. */
class PriorityLevels<Item extends ReadyItem<Item>> {
  readonly heap = new PairingHeap<PriorityLevel<Item>>(levelLess);
  readonly byPriority = new Map<number, PriorityLevel<Item>>();
}

export class ReadyHeap<Item extends ReadyItem<Item>> {
  /**
   * While the heap is small, one heap over every item (small heaps stay in
   * cache, and a level per item would only add a step); null once the heap
   * has grown past readyHeapLevels.fromItems, when items go to their levels.
   */
  private flat: PairingHeap<Item> | null = new PairingHeap<Item>(readyLess);
  /** The priority levels, made when the heap grows past the switch (null while flat: a small heap, e.g. a group's, pays nothing for them). */
  private tiers: PriorityLevels<Item> | null = null;
  private count = 0;
  /**
   * Items of this heap the delivery prefetch has asked the store for and no
   * delivery has taken since (delivery-prefetch.ts): it asks again once this
   * runs low, so it asks at the rate deliveries take from the heap.
   */
  prefetchedAhead = 0;
  /** nextKeys's candidates, kept between calls (emptied after each). */
  private frontier: Array<HeapLinks<Item>> | null = null;

  get size(): number {
    return this.count;
  }

  /** Whether the items sit in priority levels (the heap grew large) rather than one heap. */
  get leveled(): boolean {
    return this.flat === null;
  }

  /** The best item, or undefined when empty. */
  peek(): Item | undefined {
    if (this.flat !== null) return this.flat.peek();
    const level = this.tiers!.heap.peek();
    return level === undefined ? undefined : level.items.peek();
  }

  insertNode(item: Item): void {
    this.count++;
    if (this.flat !== null) {
      this.flat.insertNode(item);
      if (this.count > readyHeapLevels.fromItems) this.toLevels(this.flat);
      return;
    }
    this.insertLeveled(item);
  }

  /** Remove an item by its handle (it must be in this heap). */
  remove(item: Item): void {
    this.count--;
    if (this.flat !== null) {
      this.flat.remove(item);
      return;
    }
    const level = this.tiers!.byPriority.get(item.priority);
    assert(level !== undefined, "ready heap: removing an item of a priority it does not hold");
    level.items.remove(item);
    if (level.items.size === 0) {
      this.tiers!.heap.remove(level);
      this.tiers!.byPriority.delete(item.priority);
    }
    if (this.count < readyHeapLevels.flatBelowItems) this.toFlat();
  }

  /**
   * Append to `out` the keys of the next items a pop would give, best first,
   * up to `limit`, from the one heap or the best priority level (a
   * best-first walk: each visited item has its children paired into one
   * subtree, as its pop would, and adds them to a small frontier heap, capped
   * at frontierMax). For the delivery prefetch: a guess that nothing relies on.
   */
  nextKeys(limit: number, out: ItemKey[]): void {
    const heap = this.flat ?? this.tiers!.heap.peek()?.items;
    if (heap === undefined) return;
    const root = heap.peekNode();
    if (root === null) return;
    const less = this.flat !== null ? readyLess : samePriorityLess;
    // The frontier is a small binary heap in delivery order (an array, kept between calls).
    const frontier = (this.frontier ??= []);
    frontier.length = 0;
    frontier.push(root);
    const end = out.length + limit;
    while (out.length < end && frontier.length > 0) {
      const node = popFrontier(frontier, less);
      out.push(node.value.key);
      // Pair the node's children into one subtree first (the work its pop would do anyway), so the frontier stays small.
      heap.compactChildren(node);
      for (let child = node.child; child !== null && frontier.length < frontierMax; child = child.next) pushFrontier(frontier, child, less);
    }
    frontier.length = 0;
  }

  /**
   * The roots a walk in delivery order without popping starts from
   * (list-ready.ts): the one heap's root, or each level's, skipping levels of
   * a priority below `minPriority` (everything in them orders before it).
   */
  walkRoots(minPriority: number): Array<HeapLinks<Item>> {
    const roots: Array<HeapLinks<Item>> = [];
    if (this.flat !== null) {
      const root = this.flat.peekNode();
      if (root !== null) roots.push(root);
      return roots;
    }
    for (const level of this.tiers!.byPriority.values()) {
      if (level.priority < minPriority) continue;
      const root = level.items.peekNode();
      if (root !== null) roots.push(root);
    }
    return roots;
  }

  /**
   * Visit items in delivery order without popping, until `visit` returns
   * true: a best-first walk from every root (walkRoots), each visited item's
   * children paired into one subtree first, as its pop would. For a pick
   * that may take only some of the items (groups/group-rotation.ts).
   */
  walkInOrder(visit: (item: Item) => boolean): void {
    const frontier: Array<HeapLinks<Item>> = [];
    for (const root of this.walkRoots(Number.NEGATIVE_INFINITY)) pushFrontier(frontier, root, readyLess);
    while (frontier.length > 0) {
      const node = popFrontier(frontier, readyLess);
      if (visit(node.value)) return;
      this.compactChildren(node);
      for (let child = node.child; child !== null; child = child.next) pushFrontier(frontier, child, readyLess);
    }
  }

  /** compactChildren of the heap that holds `node` (list-ready.ts). */
  compactChildren(node: HeapLinks<Item>): void {
    if (this.flat !== null) {
      this.flat.compactChildren(node);
      return;
    }
    const level = this.tiers!.byPriority.get(node.value.priority);
    assert(level !== undefined, "ready heap: compacting an item of a priority it does not hold");
    level.items.compactChildren(node);
  }

  private insertLeveled(item: Item): void {
    let level = this.tiers!.byPriority.get(item.priority);
    if (level === undefined) {
      level = new PriorityLevel<Item>(item.priority);
      this.tiers!.byPriority.set(item.priority, level);
      this.tiers!.heap.insertNode(level);
    }
    level.items.insertNode(item);
  }

  /** The heap grew large: every item moves to its level (once; O(n log n) over readyHeapLevels.fromItems items). */
  private toLevels(flat: PairingHeap<Item>): void {
    this.flat = null;
    this.tiers = new PriorityLevels<Item>();
    for (let item = flat.pop(); item !== undefined; item = flat.pop()) this.insertLeveled(item);
  }

  /** The heap shrank well below the switch: the items go back to one heap. */
  private toFlat(): void {
    const flat = new PairingHeap<Item>(readyLess);
    for (const level of this.tiers!.byPriority.values()) {
      for (let item = level.items.pop(); item !== undefined; item = level.items.pop()) flat.insertNode(item);
      this.tiers!.heap.remove(level);
    }
    this.tiers = null;
    this.flat = flat;
  }

  checkInvariants(): void {
    if (this.flat !== null) {
      this.flat.checkInvariants();
      assert(this.flat.size === this.count, `ready heap: size ${this.count} but ${this.flat.size} items in its one heap`);
      assert(this.tiers === null, "ready heap: levels kept beside the one heap");
      return;
    }
    this.tiers!.heap.checkInvariants();
    let items = 0;
    for (const [priority, level] of this.tiers!.byPriority) {
      assert(level.priority === priority && level.inHeap, `ready heap: level ${priority} misfiled or out of the level heap`);
      assert(level.items.size > 0, `ready heap: empty level ${priority} kept`);
      level.items.checkInvariants();
      items += level.items.size;
    }
    assert(this.tiers!.heap.size === this.tiers!.byPriority.size, `ready heap: ${this.tiers!.heap.size} levels in the heap, ${this.tiers!.byPriority.size} filed`);
    assert(items === this.count, `ready heap: size ${this.count} but ${items} items in its levels`);
    assert(this.count >= readyHeapLevels.flatBelowItems, `ready heap: ${this.count} items in levels, below the switch back`);
    const top = this.peek();
    if (top !== undefined) for (const level of this.tiers!.byPriority.values()) assert(!readyLess(level.items.peek() as Item, top), "ready heap: a level's best orders before the top");
  }
}
