// A generic min pairing heap with node handles. It is handed its ordering (a
// strict "less" function) and never learns what it stores. Handles let callers
// remove or re-key an entry without a scan (cancel, TTL, lease changes).
// Merges are iterative (two-pass pairing, the pairs kept on a list threaded
// through their own `next` links): a recursive merge overflows the stack at a
// million entries, and a scratch array would be state shared between heaps.
//
// An insert that does not order before the root waits in a batch; every
// insertBatchMax such inserts are paired into one subtree, which then joins
// the root. Melding each insert into the root at once made a heap filled in
// order (FIFO, or deadlines that only grow) a root with every other entry
// as a child, and its first pop paired them all at once: 50 ms for 62,500
// items spread over memory, 418 ms for the first dequeue of a million keyed
// items on 16 shards (decisions/049). Batched, the root gathers one subtree
// per batch, paired while its entries are still in cache. The root stays
// the minimum (a waiting entry never orders before it, and the root only
// falls until the batch is paired), so peek needs no pairing; everything
// that reads or moves the links pairs the batch first.

import { assert } from "./assert.ts";

/**
 * A heap entry's links. Outside any heap `prev` holds the notInHeap mark, so
 * membership costs no field of its own (with a million ready items every
 * field is 8 MB). Concrete entries are HeapNode (a node holding a value) or
 * an IntrusiveHeapNode subclass (the entry is its own value).
 */
export abstract class HeapLinks<T> {
  /** First child. */
  child: HeapLinks<T> | null = null;
  /** Next sibling. */
  next: HeapLinks<T> | null = null;
  /** Previous sibling, or the parent when this node is a first child; null for the root; notInHeap outside any heap. */
  prev: HeapLinks<T> | null = notInHeap;
  abstract readonly value: T;
  /** Whether the node is currently in a heap, or held outside one by its owner (guards double removal). */
  get inHeap(): boolean {
    return this.prev !== notInHeap;
  }

  /**
   * Whether the node's owner holds it outside any heap's links, in an order
   * of its own (a ready heap's sorted front: engine/ready/ready-heap.ts). A
   * held node reads as inHeap, so membership still costs no field.
   */
  get held(): boolean {
    return this.prev === heldMark;
  }

  /** Hold a node that is in no heap (see `held`); its links are cleared. */
  hold(): void {
    assert(this.prev === notInHeap, "pairing heap: holding a node that is in a heap or held");
    this.child = null;
    this.next = null;
    this.prev = heldMark;
  }

  /** Undo hold(): the node is in no heap again. */
  release(): void {
    assert(this.prev === heldMark, "pairing heap: releasing a node that is not held");
    this.prev = notInHeap;
  }
}

/** The `prev` of a node in no heap: a mark no heap ever links to. */
const notInHeap = Object.freeze({ child: null, next: null, prev: null }) as unknown as HeapLinks<never>;

/** The `prev` of a node waiting in a heap's insert batch: a mark no heap ever links to. */
const batchedMark = Object.freeze({ child: null, next: null, prev: null }) as unknown as HeapLinks<never>;

/** Inserts that wait before they are paired into one subtree (64): a first pop after n inserts in order pairs n / 64 subtrees. */
const insertBatchMax = 64;

/** The `prev` of a held node (HeapLinks.hold): a mark no heap ever links to. */
const heldMark = Object.freeze({ child: null, next: null, prev: null }) as unknown as HeapLinks<never>;

/** A heap entry holding a value. */
export class HeapNode<T> extends HeapLinks<T> {
  constructor(public value: T) {
    super();
  }
}

/**
 * An entry that is its own value: a class extends IntrusiveHeapNode<Itself>,
 * which saves the node object, and the value is a getter, not a field, where
 * entries are many (a million ready items).
 */
export abstract class IntrusiveHeapNode<Self> extends HeapLinks<Self> {
  get value(): Self {
    return this as unknown as Self;
  }
}

export class PairingHeap<T> {
  private root: HeapLinks<T> | null = null;
  private count = 0;
  /** Inserts waiting to be paired, oldest first, linked through `next`. */
  private batchFirst: HeapLinks<T> | null = null;
  private batchLast: HeapLinks<T> | null = null;
  private batchCount = 0;

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.count;
  }

  insert(value: T): HeapNode<T> {
    const node = new HeapNode(value);
    this.insertNode(node);
    return node;
  }

  /** Re-insert a node that was removed (keeps the caller's handle). */
  insertNode(node: HeapLinks<T>): void {
    assert(!node.inHeap, "pairing heap: node already in a heap");
    node.child = null;
    node.next = null;
    this.count++;
    const root = this.root;
    if (root === null || this.less(node.value, root.value)) {
      node.prev = null;
      this.root = root === null ? node : this.meld(root, node);
      return;
    }
    node.prev = batchedMark;
    if (this.batchLast === null) this.batchFirst = node;
    else this.batchLast.next = node;
    this.batchLast = node;
    if (++this.batchCount === insertBatchMax) this.pairBatch();
  }

  peek(): T | undefined {
    return this.root === null ? undefined : this.root.value;
  }

  /** The root node, every entry reachable from it (the insert batch is paired first). */
  peekNode(): HeapLinks<T> | null {
    this.pairBatch();
    return this.root;
  }

  pop(): T | undefined {
    this.pairBatch();
    const top = this.root;
    if (top === null) return undefined;
    this.root = this.mergePairs(top.child);
    if (this.root !== null) this.root.prev = null;
    this.detach(top);
    this.count--;
    return top.value;
  }

  /** Remove an entry by its handle. */
  remove(node: HeapLinks<T>): void {
    assert(node.inHeap && node.prev !== heldMark, "pairing heap: removing a node that is not in the heap");
    this.pairBatch();
    if (node === this.root) {
      this.pop();
      return;
    }
    this.cut(node);
    const rest = this.mergePairs(node.child);
    if (rest !== null) {
      rest.prev = null;
      this.root = this.meld(this.root as HeapLinks<T>, rest);
    }
    this.detach(node);
    this.count--;
  }

  /** The node's value now orders no later than before (decrease-key): O(1) amortized. */
  decreased(node: HeapLinks<T>): void {
    assert(node.inHeap, "pairing heap: decreased() on a node not in the heap");
    this.pairBatch();
    if (node === this.root) return;
    this.cut(node);
    node.next = null;
    node.prev = null;
    this.root = this.meld(this.root as HeapLinks<T>, node);
  }

  /** The node's value changed in either direction. */
  update(node: HeapLinks<T>): void {
    this.remove(node);
    this.insertNode(node);
  }

  /**
   * Replace a node's list of children with one subtree (two-pass pairing):
   * the same entries, still in heap order, so the heap pops exactly as
   * before. A walk in order without popping (engine/reads/list.ts) calls it before
   * it looks at a node's children, so a root that gathered a million children
   * from inserts is paired once (work its next pop would do anyway) instead
   * of each child being looked at on every walk. O(children).
   */
  compactChildren(node: HeapLinks<T>): void {
    assert(node.inHeap, "pairing heap: compactChildren() on a node not in the heap");
    this.pairBatch();
    const first = node.child;
    if (first === null || first.next === null) return;
    const merged = this.mergePairs(first) as HeapLinks<T>;
    merged.prev = node;
    merged.next = null;
    node.child = merged;
  }

  clear(): void {
    this.root = null;
    this.count = 0;
    this.batchFirst = null;
    this.batchLast = null;
    this.batchCount = 0;
  }

  /** Pair the insert batch into one subtree and join it to the root (a batch waits only beside a root: see insertNode). */
  private pairBatch(): void {
    const first = this.batchFirst;
    if (first === null) return;
    this.batchFirst = null;
    this.batchLast = null;
    this.batchCount = 0;
    const subtree = this.mergePairs(first) as HeapLinks<T>;
    subtree.prev = null;
    subtree.next = null;
    this.root = this.meld(this.root as HeapLinks<T>, subtree);
  }

  /** Walks the whole heap (tests only): heap order, link consistency, size. */
  checkInvariants(): void {
    if (this.root === null) {
      assert(this.count === 0, "pairing heap: empty root with nonzero size");
      return;
    }
    assert(this.root.prev === null && this.root.next === null, "pairing heap: root has links");
    let seen = 0;
    const stack: Array<HeapLinks<T>> = [this.root];
    while (stack.length > 0) {
      const parent = stack.pop() as HeapLinks<T>;
      seen++;
      assert(parent.inHeap, "pairing heap: node in heap not marked inHeap");
      let previous: HeapLinks<T> = parent;
      for (let c = parent.child; c !== null; c = c.next) {
        assert(c.prev === previous, "pairing heap: broken prev link");
        assert(!this.less(c.value, parent.value), "pairing heap: child orders before parent");
        stack.push(c);
        previous = c;
      }
    }
    let batched = 0;
    for (let node = this.batchFirst; node !== null; node = node.next) {
      assert(node.prev === batchedMark && node.child === null, "pairing heap: a batched insert has links");
      assert(!this.less(node.value, this.root.value), "pairing heap: a batched insert orders before the root");
      batched++;
    }
    assert(batched === this.batchCount && (batched === 0) === (this.batchLast === null), "pairing heap: batch count or tail wrong");
    assert(seen + batched === this.count, `pairing heap: size ${this.count} but ${seen + batched} nodes reachable`);
  }

  private detach(node: HeapLinks<T>): void {
    node.child = null;
    node.next = null;
    node.prev = notInHeap;
  }

  /** Unlink a non-root node (with its subtree) from its parent's child list. */
  private cut(node: HeapLinks<T>): void {
    const prev = node.prev as HeapLinks<T>;
    if (prev.child === node) prev.child = node.next;
    else prev.next = node.next;
    if (node.next !== null) node.next.prev = prev;
  }

  /** Link two roots; the winner keeps `a`'s position when they tie (stable for equal keys). */
  private meld(a: HeapLinks<T>, b: HeapLinks<T>): HeapLinks<T> {
    if (this.less(b.value, a.value)) {
      const t = a;
      a = b;
      b = t;
    }
    b.prev = a;
    b.next = a.child;
    if (a.child !== null) a.child.prev = b;
    a.child = b;
    a.next = null;
    a.prev = null;
    return a;
  }

  /**
   * Two-pass pairing of a sibling list: meld pairs left to right, then fold
   * right to left. The first pass pushes each melded pair on a stack linked
   * through the pairs' own `next` (a pair's root has no siblings any more),
   * so the merge needs no scratch array: pops allocate nothing, and no array
   * is shared between heaps or kept per heap.
   */
  private mergePairs(first: HeapLinks<T> | null): HeapLinks<T> | null {
    if (first === null) return null;
    // The pairs melded so far, the last one first.
    let pairs: HeapLinks<T> | null = null;
    let node: HeapLinks<T> | null = first;
    while (node !== null) {
      const a: HeapLinks<T> = node;
      const b: HeapLinks<T> | null = a.next;
      if (b === null) {
        a.prev = null;
        a.next = pairs;
        pairs = a;
        break;
      }
      node = b.next;
      a.next = null;
      a.prev = null;
      b.next = null;
      b.prev = null;
      const pair = this.meld(a, b);
      pair.next = pairs;
      pairs = pair;
    }
    let acc = pairs as HeapLinks<T>;
    let rest = acc.next;
    acc.next = null;
    while (rest !== null) {
      const left: HeapLinks<T> = rest;
      rest = left.next;
      left.next = null;
      acc = this.meld(left, acc);
    }
    return acc;
  }
}
