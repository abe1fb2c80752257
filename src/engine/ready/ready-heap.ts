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
// In front of either sits a short sorted array, the front: when a removal
// leaves it empty, the next readyFront.items items are popped from the heap
// at once and held there in delivery order, and later deliveries take from
// it. Why: with random priorities a pop melds items that lie all over memory,
// and between two pops of one heap (a topic over many signatures and shards)
// the cache has moved on, so every pop paid its misses in full; popped back to
// back, each pop finds the nodes the last one touched
// (docs/decisions/037-ready-front.md). Every front item orders no later than
// every item left in the heap, so peek, walks and order are unchanged; an
// insert that orders before the front's last item joins the front.
//
// Items are their own inner-heap nodes (intrusive), so a lease reaches its
// item's heap without a node object; a front item is a held node
// (HeapLinks.hold), so it still reads as inHeap.

import { assert } from "../../lib/assert.ts";
import { type HeapLinks, IntrusiveHeapNode, PairingHeap } from "../../lib/pairing-heap.ts";
import { readyFront, readyHeapLevels } from "../../limits.ts";
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
  /** The front: items popped ahead from the heap, in delivery order from frontHead on (null until the first refill). */
  private front: Item[] | null = null;
  private frontHead = 0;
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
    const front = this.front;
    if (front !== null && this.frontHead < front.length) return front[this.frontHead];
    return this.peekHeap();
  }

  insertNode(item: Item): void {
    this.count++;
    const front = this.front;
    if (front !== null && this.frontHead < front.length && readyLess(item, front[front.length - 1] as Item)) {
      this.insertFront(front, item);
      return;
    }
    this.insertHeap(item);
  }

  /**
   * Remove an item by its handle (it must be in this heap); a removal that
   * empties the front refills it. With no front yet, only taking the best
   * item starts one: a removal from the middle (a cancel, a shard dropped
   * newest first) does not pop the best items ahead, which after a long run
   * of FIFO inserts pairs every one of the root's children at once (50 ms
   * for 62,500 items; decisions/049).
   */
  remove(item: Item): void {
    const startsFront = this.front === null && item === this.peekHeap();
    this.count--;
    if (item.held) this.removeFront(item);
    else this.removeHeap(item);
    const front = this.front;
    if ((front === null ? startsFront : this.frontHead === front.length) && this.count > 0) this.refillFront();
  }

  /**
   * Append to `out` the keys of the next items a pop would give, best first,
   * up to `limit`, from the one heap or the best priority level (a
   * best-first walk: each visited item has its children paired into one
   * subtree, as its pop would, and adds them to a small frontier heap, capped
   * at frontierMax), after the front's items. For the delivery prefetch: a
   * guess that nothing relies on.
   */
  nextKeys(limit: number, out: ItemKey[]): void {
    const front = this.front;
    if (front !== null) {
      for (let at = this.frontHead; at < front.length && limit > 0; at++, limit--) out.push((front[at] as Item).key);
      if (limit === 0) return;
    }
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
   * (list-ready.ts): each front item (a root without children), then the one
   * heap's root, or each level's, skipping items and levels of a priority
   * below `minPriority` (everything in them orders before it).
   */
  walkRoots(minPriority: number): Array<HeapLinks<Item>> {
    const roots: Array<HeapLinks<Item>> = [];
    const front = this.front;
    if (front !== null) for (let at = this.frontHead; at < front.length; at++) if ((front[at] as Item).priority >= minPriority) roots.push(front[at] as Item);
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
    // A front item has no children; a node with fewer than two has nothing to pair.
    if (node.child === null || node.child.next === null) return;
    if (this.flat !== null) {
      this.flat.compactChildren(node);
      return;
    }
    const level = this.tiers!.byPriority.get(node.value.priority);
    assert(level !== undefined, "ready heap: compacting an item of a priority it does not hold");
    level.items.compactChildren(node);
  }

  /** The heap's best item (the front aside). */
  private peekHeap(): Item | undefined {
    if (this.flat !== null) return this.flat.peek();
    const level = this.tiers!.heap.peek();
    return level === undefined ? undefined : level.items.peek();
  }

  /** Items in the heap, the front aside. */
  private get heapSize(): number {
    const front = this.front;
    return front === null ? this.count : this.count - (front.length - this.frontHead);
  }

  private insertHeap(item: Item): void {
    if (this.flat !== null) {
      this.flat.insertNode(item);
      if (this.heapSize > readyHeapLevels.fromItems) this.toLevels(this.flat);
      return;
    }
    this.insertLeveled(item);
  }

  private removeHeap(item: Item): void {
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
    if (this.heapSize < readyHeapLevels.flatBelowItems) this.toFlat();
  }

  /** Move the heap's best item to the end of the front (the heap is not empty). */
  private popIntoFront(front: Item[]): void {
    let item: Item;
    if (this.flat !== null) {
      item = this.flat.pop() as Item;
    } else {
      const level = this.tiers!.heap.peek() as PriorityLevel<Item>;
      item = level.items.pop() as Item;
      if (level.items.size === 0) {
        this.tiers!.heap.pop();
        this.tiers!.byPriority.delete(item.priority);
      }
    }
    item.hold();
    front.push(item);
    if (this.tiers !== null && this.heapSize < readyHeapLevels.flatBelowItems) this.toFlat();
  }

  /** The front is empty: pop the next readyFront.items items into it, back to back while their nodes are in cache. */
  private refillFront(): void {
    let front = this.front;
    if (front === null) {
      front = [];
      this.front = front;
    } else {
      front.length = 0;
    }
    this.frontHead = 0;
    const take = Math.min(readyFront.items, this.count);
    while (front.length < take) this.popIntoFront(front);
  }

  /** `item` orders before the front's last item: it joins the front in order; a front grown past twice its size gives its last item back. */
  private insertFront(front: Item[], item: Item): void {
    let at = front.length;
    while (at > this.frontHead && readyLess(item, front[at - 1] as Item)) at--;
    item.hold();
    front.splice(at, 0, item);
    if (front.length - this.frontHead > 2 * readyFront.items) {
      const last = front.pop() as Item;
      last.release();
      this.insertHeap(last);
    }
  }

  private removeFront(item: Item): void {
    const front = this.front as Item[];
    item.release();
    if (front[this.frontHead] === item) {
      this.frontHead++;
      if (this.frontHead === front.length) {
        front.length = 0;
        this.frontHead = 0;
      }
      return;
    }
    const at = front.indexOf(item, this.frontHead);
    assert(at >= 0, "ready heap: a held item missing from the front");
    front.splice(at, 1);
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

  /** The heap grew large: every item of it moves to its level (once; O(n log n) over readyHeapLevels.fromItems items); the front stays. */
  private toLevels(flat: PairingHeap<Item>): void {
    this.flat = null;
    this.tiers = new PriorityLevels<Item>();
    for (let item = flat.pop(); item !== undefined; item = flat.pop()) this.insertLeveled(item);
  }

  /** The heap shrank well below the switch: its items go back to one heap; the front stays. */
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
    const heapSize = this.heapSize;
    const front = this.front;
    if (front !== null) {
      for (let at = this.frontHead; at < front.length; at++) {
        const item = front[at] as Item;
        assert(item.held && item.child === null && item.next === null, "ready heap: a front item is not held, or has links");
        if (at > this.frontHead) assert(readyLess(front[at - 1] as Item, item), "ready heap: the front is out of order");
      }
      assert(front.length - this.frontHead <= 2 * readyFront.items, "ready heap: the front outgrew twice its size");
      const last = front[front.length - 1];
      const heapTop = this.peekHeap();
      if (last !== undefined && this.frontHead < front.length && heapTop !== undefined) assert(readyLess(last, heapTop), "ready heap: the heap's best orders before the front's last");
    }
    if (this.flat !== null) {
      this.flat.checkInvariants();
      assert(this.flat.size === heapSize, `ready heap: ${heapSize} items in the heap but ${this.flat.size} in its one heap`);
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
    assert(items === heapSize, `ready heap: ${heapSize} items in the heap but ${items} in its levels`);
    assert(heapSize >= readyHeapLevels.flatBelowItems, `ready heap: ${heapSize} items in levels, below the switch back`);
    const top = this.peekHeap();
    if (top !== undefined) for (const level of this.tiers!.byPriority.values()) assert(!readyLess(level.items.peek() as Item, top), "ready heap: a level's best orders before the top");
  }
}
