// Per signature, the groups that hold ready items of it, ordered by their
// best such item as the rotation orders groups: (priority, v, deliverAtMs,
// key). A worker that may take only some signatures (a matching worker)
// reads the root of each signature it may take, instead of walking the
// rotation past groups whose best items it may not take; the best of those
// roots, and the nil group's best for it, is its pick.
//
// An entry is one group's heap of one signature (SignatureEntry: a group's
// own heap for its first signature, a side heap for each other). Its record
// is a lower bound of its true key, kept lazily, as the tops of the topic's
// signature heaps are (matching/class-heap.ts): an item better than the
// record (an enqueue, a release) lowers it at once; anything that makes the
// key worse (a delivery from the heap, the group's v moving on, the heap
// emptying, the group leaving the rotation) leaves the record as it is, and
// the pick that meets the stale record at a root fixes it or drops the entry.

import type { EligibilitySource } from "../matching/tops-heap.ts";
import { IndexedHeap } from "../../lib/indexed-heap.ts";
import type { ReadyHeap, ReadyItem } from "../ready/ready-heap.ts";

/** What a signature heap reads of an entry: its heap, its group's rotation state and v, and its record. */
export interface SignatureEntry<Item extends ReadyItem<Item>> {
  readonly entryHeap: ReadyHeap<Item>;
  readonly entryGroup: { readonly v: number; readonly rotationAt: number };
  /** Position in its signature's heap, -1 when out. */
  entryAt: number;
  recPriority: number;
  recV: number;
  recDeliverAtMs: number;
  recKey: number;
}

function recordLess<Item extends ReadyItem<Item>>(a: SignatureEntry<Item>, b: SignatureEntry<Item>): boolean {
  if (a.recPriority !== b.recPriority) return a.recPriority < b.recPriority;
  if (a.recV !== b.recV) return a.recV < b.recV;
  if (a.recDeliverAtMs !== b.recDeliverAtMs) return a.recDeliverAtMs < b.recDeliverAtMs;
  return a.recKey < b.recKey;
}

/** One signature's entries: a binary min-heap of records, each entry keeping its position in entryAt. */
class SignatureHeap<Item extends ReadyItem<Item>> extends IndexedHeap<SignatureEntry<Item>> {
  protected less(a: SignatureEntry<Item>, b: SignatureEntry<Item>): boolean {
    return recordLess(a, b);
  }

  protected setAt(entry: SignatureEntry<Item>, at: number): void {
    entry.entryAt = at;
  }

  /** The entry's record was just set to its true key: file it, or move it to its place (up or down). */
  file(entry: SignatureEntry<Item>): void {
    if (entry.entryAt < 0) this.push(entry);
    else this.update(entry.entryAt);
  }

  /** The root, made true: stale records are re-keyed (sifted down) or dropped until the root's record is its key. Null when empty. */
  freshRoot(): SignatureEntry<Item> | null {
    for (;;) {
      const root = this.peek();
      if (root === undefined) return null;
      const group = root.entryGroup;
      const top = group.rotationAt < 0 ? undefined : root.entryHeap.peek();
      if (top === undefined) {
        this.removeAt(0);
        continue;
      }
      if (root.recPriority === top.priority && root.recV === group.v && root.recDeliverAtMs === top.deliverAtMs && root.recKey === top.key) return root;
      root.recPriority = top.priority;
      root.recV = group.v;
      root.recDeliverAtMs = top.deliverAtMs;
      root.recKey = top.key;
      this.siftDown(0);
    }
  }
}

/** The topic's signature heaps of grouped items. */
export class SignatureHeaps<Item extends ReadyItem<Item>> {
  private readonly bySignature = new Map<number, SignatureHeap<Item>>();

  /** The entry of signature `sig` may have become better than its record (its heap gained a new best, or its group entered the rotation): record its key now. */
  refresh(entry: SignatureEntry<Item>, sig: number): void {
    const top = entry.entryHeap.peek();
    if (top === undefined || entry.entryGroup.rotationAt < 0) return;
    entry.recPriority = top.priority;
    entry.recV = entry.entryGroup.v;
    entry.recDeliverAtMs = top.deliverAtMs;
    entry.recKey = top.key;
    let heap = this.bySignature.get(sig);
    if (heap === undefined) {
      heap = new SignatureHeap<Item>();
      this.bySignature.set(sig, heap);
    }
    heap.file(entry);
  }

  /**
   * The best (priority, v, deliverAtMs, key) among the fresh roots of the
   * signatures `kind` may take: the entry, or null. The caller compares it
   * with the nil group's best.
   */
  best(eligibility: EligibilitySource, kind: number): SignatureEntry<Item> | null {
    let best: SignatureEntry<Item> | null = null;
    for (const [sig, heap] of this.bySignature) {
      // A signature whose entries are all stale may have been freed (the Matcher answers not eligible for a freed id).
      if (heap.size === 0 || !eligibility.isEligible(kind, sig)) continue;
      const root = heap.freshRoot();
      if (root !== null && (best === null || recordLess(root, best))) best = root;
    }
    return best;
  }
}
