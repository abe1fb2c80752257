// One fairness group of a topic (the contract's `group`: a tenant, a
// customer, any key whose share should be fair and bounded): its ready items
// in delivery order (it is their ready heap), its virtual time for the
// rotation (group-rotation.ts), its per-state counts for `groups`, and what
// holds it back (a pause, its max_leased, its rate bucket). Items without a
// group form the nil group, whose ready items stay in the topic's own
// signature heaps (ready/topic.ts), so a topic that never names a group keeps
// its index as it was.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { PolicyRecord } from "../../storage/record.ts";
import type { LiveStateName } from "../api.ts";
import { ReadyHeap, type ReadyItem } from "../ready/ready-heap.ts";
import type { SignatureEntry } from "./signature-heaps.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";

/** Why a group (or a topic) delivers nothing now: bits of Group.held. */
export const Held = {
  paused: 1,
  maxLeased: 2,
  rate: 4,
} as const;

/**
 * What a rate refill deadline fires on (bounds.ts): a topic's own bucket
 * (group null) or one group's. Typed loosely here, where neither Topic nor
 * LiveItem may be imported (they import this file); bounds.ts narrows it.
 */
export interface RefillTarget {
  readonly topic: object;
  readonly group: object | null;
}

export type RefillDeadline = Deadline<typeof DeadlineKind.BoundRefill, RefillTarget>;

/** The end of a group's timed pause. */
export type GroupPauseDeadline<Item extends ReadyItem<Item>> = Deadline<typeof DeadlineKind.GroupPauseEnd, GroupPause<Item>>;

/** A group's ready items of one of its other signatures, and that heap's entry in the topic's signature heaps. */
class SideHeap<Item extends ReadyItem<Item>> extends ReadyHeap<Item> implements SignatureEntry<Item> {
  entryAt = -1;
  recPriority = 0;
  recV = 0;
  recDeliverAtMs = 0;
  recKey = 0;
  constructor(readonly entryGroup: Group<Item>) {
    super();
  }

  get entryHeap(): ReadyHeap<Item> {
    return this;
  }
}

/** A group's pause: until `resume` (untilMs null) or until untilMs. */
export class GroupPause<Item extends ReadyItem<Item>> {
  node: HeapNode<GroupPauseDeadline<Item>> | null = null;
  constructor(
    /** The group's topic (a Topic of ready/topic.ts, which imports this file: group-pauses.ts types it). */
    readonly topic: object,
    readonly group: Group<Item>,
    public untilMs: number | null,
  ) {}
}

export class Group<Item extends ReadyItem<Item>> extends ReadyHeap<Item> implements SignatureEntry<Item> {
  /** Virtual time: each delivery adds 1 / weight (group-rotation.ts). */
  v = 0;
  /** Position in the rotation's heap and in its least-v heap; -1 while out of the rotation. */
  rotationAt = -1;
  leastAt = -1;
  /** The best ready item's delivery-order key while in the rotation (kept here: comparisons then touch no item). */
  bestPriority = 0;
  bestDeliverAtMs = 0;
  bestKey = 0;
  /** Per-state counts of the group's items (the `groups` op). */
  ready = 0;
  delayed = 0;
  waiting = 0;
  leased = 0;
  dead = 0;
  /** Held bits (Held): 0 when the group may deliver. */
  held = 0;
  pause: GroupPause<Item> | null = null;
  /**
   * The `requires` signature of the ready items in this heap itself; ready
   * items of other signatures sit in `others`, one heap each (made when a
   * second signature appears, so a pick for a worker that may take only some
   * signatures judges a heap by its signature, not item by item). -1 until
   * its first ready item, then fixed for the group's life.
   */
  sig0 = -1;
  others: Map<number, SideHeap<Item>> | null = null;
  // As the entry of signature sig0 in the topic's signature heaps (signature-heaps.ts).
  entryAt = -1;
  recPriority = 0;
  recV = 0;
  recDeliverAtMs = 0;
  recKey = 0;
  /** The policy that binds it (its own, or the topic's "*"), or null. */
  policy: PolicyRecord | null = null;
  /** The refill deadline scheduled while held by its rate. */
  refillNode: HeapNode<RefillDeadline> | null = null;

  constructor(
    /** The group's name; null for the nil group. */
    readonly name: string | null,
  ) {
    super();
  }

  get items(): number {
    return this.ready + this.delayed + this.waiting + this.leased + this.dead;
  }

  get weight(): number {
    return this.policy?.weight ?? 1;
  }

  countState(state: LiveStateName, delta: number): void {
    this[state] += delta;
  }

  get entryHeap(): ReadyHeap<Item> {
    return this;
  }

  get entryGroup(): Group<Item> {
    return this;
  }

  /** The signature entry of the heap that holds signature `sig` (itself for sig0). */
  entryOf(sig: number): SignatureEntry<Item> {
    return sig === this.sig0 ? this : (this.others?.get(sig) as SideHeap<Item>);
  }

  /** The heap a ready item of signature `sig` goes to. */
  heapFor(sig: number): ReadyHeap<Item> {
    if (this.sig0 === sig) return this;
    // Set once: the group's own heap stays filed under sig0 in the signature heaps while it lives.
    if (this.sig0 === -1) {
      this.sig0 = sig;
      return this;
    }
    const others = (this.others ??= new Map());
    let heap = others.get(sig);
    if (heap === undefined) {
      heap = new SideHeap<Item>(this);
      others.set(sig, heap);
    }
    return heap;
  }

  /** The heap that holds a ready item of signature `sig`. */
  heapOf(sig: number): ReadyHeap<Item> {
    if (sig === this.sig0) return this;
    const heap = this.others?.get(sig);
    if (heap === undefined) throw new Error(`group ${String(this.name)}: no heap for signature ${sig}`);
    return heap;
  }

  /** A heap of another signature emptied: it goes. */
  dropIfEmpty(heap: ReadyHeap<Item>, sig: number): void {
    if (heap === this || heap.size > 0 || this.others === null) return;
    this.others.delete(sig);
    if (this.others.size === 0) this.others = null;
  }

  /** Every heap of the group's ready items. */
  heaps(): Array<ReadyHeap<Item>> {
    return this.others === null ? [this] : [this, ...this.others.values()];
  }

  /** Its ready items in heaps (what `ready` counts once their enqueues are durable). */
  get readyInHeaps(): number {
    let count = this.size;
    if (this.others !== null) for (const heap of this.others.values()) count += heap.size;
    return count;
  }

  /** Whether its max_leased holds it back now. */
  atMaxLeased(): boolean {
    const max = this.policy?.maxLeased ?? null;
    return max !== null && this.leased >= max;
  }
}
