// The one deadline structure: a pairing heap of every timed event (delay due,
// lease expiry, TTL, waiter timeout, outcome retention end, acked-outcome
// retention end, deferred lease writes, pause end). The engine's
// tick() pops what is due; the server arms one timer from the earliest entry.
// Nothing else in the engine keeps a timer.
//
// The queue is generic over what its deadlines fire on, as the pairing heap
// is over what it orders: a Deadline holds its kind and one target, and the
// module that owns a kind declares its deadline type (state/item-parts.ts,
// ops/waiters.ts, outcomes/outcome-table.ts, ready/topic.ts); engine-deadlines.ts joins them
// into the union the engine's queue holds. So this file imports none of
// them, and nothing the deadlines point at has to import the engine above it.

import { type HeapLinks, HeapNode, PairingHeap } from "../../lib/pairing-heap.ts";

/** Every kind of deadline; the comment names what it fires on (its target). */
export const DeadlineKind = {
  /** A delayed item becomes ready (target: the item). */
  Due: 0,
  /** A lease expires (target: the item). */
  Lease: 1,
  /** A TTL ends the item (target: the item). */
  Ttl: 2,
  /** A parked dequeue's wait ends (target: the waiter). */
  WaiterTimeout: 3,
  /** A cancelled or expired item's outcome is forgotten (target: the retained outcome). */
  OutcomeRetention: 4,
  /** The oldest block of acked outcomes (outcomes/acked-outcomes.ts) reaches the retention: no target, one entry at a time. */
  AckedRetention: 5,
  /** Deferred at_least_once lease writes are due (state/item-states.ts's lease): no target, one entry at a time. */
  LeaseWrites: 6,
  /** A timed pause ends (target: the topic's pause). */
  PauseEnd: 7,
  /** A group's timed pause ends (target: the group's pause, groups/group.ts). */
  GroupPauseEnd: 8,
  /** A rate bucket holds a token again (target: the topic or group it bounds, groups/bounds.ts). */
  BoundRefill: 9,
  /** A ready item's prefer_wait_ms ends: any worker its requires allow may take it (target: the item). */
  PreferRelease: 10,
  /** A parked `wait`'s wait_ms runs out (target: the wait, ops/item-waits.ts). */
  ItemWaitTimeout: 11,
} as const;
export type DeadlineKind = (typeof DeadlineKind)[keyof typeof DeadlineKind];

/** One timed event: when, of what kind, and on what. Four fields: every delayed or leased item holds one. */
export class Deadline<K extends DeadlineKind = DeadlineKind, T = unknown> {
  /** Set by the queue when scheduled: deadlines at one instant fire in the order they were scheduled. */
  seq = 0;
  constructor(
    /** Mutable so an item's timer node can be reused for its next delay or lease (fewer long-lived allocations). */
    public atMs: number,
    /** Mutable for the same reuse: one node serves an item's delay and its lease. */
    public kind: K,
    readonly target: T,
  ) {}
}

const deadlineLess = (a: Deadline, b: Deadline) => a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);

/** A queue of deadlines of type D (a union over kinds, see engine-deadlines.ts); handles are typed by the deadline they hold. */
export class DeadlineQueue<D extends Deadline> {
  private readonly heap = new PairingHeap<D>(deadlineLess);
  private seq = 0;
  /** Called when a new entry becomes the earliest, so the owner of the one timer can re-arm it. */
  onEarlier: (() => void) | null = null;

  get size(): number {
    return this.heap.size;
  }

  schedule<E extends D>(deadline: E): HeapNode<E> {
    return this.scheduleNode(new HeapNode<E>(deadline), deadline.atMs, deadline.kind);
  }

  /**
   * Schedule an idle node (an item's progress, its own entry, kept for its
   * next delay or lease: LiveItem.idleTimer) at atMs as `kind`: no new objects.
   */
  scheduleNode<N extends HeapLinks<D>>(node: N, atMs: number, kind: N["value"]["kind"]): N {
    const before = this.heap.peek();
    const deadline = node.value;
    deadline.atMs = atMs;
    deadline.seq = this.seq++;
    deadline.kind = kind;
    this.heap.insertNode(node);
    if (this.onEarlier !== null && (before === undefined || atMs < before.atMs)) this.onEarlier();
    return node;
  }

  cancel(node: HeapLinks<D>): void {
    this.heap.remove(node);
  }

  /** Move an entry to a new instant (a lease extended or shortened); returns the same handle. */
  reschedule<N extends HeapLinks<D>>(node: N, atMs: number): N {
    this.heap.remove(node);
    return this.scheduleNode(node, atMs, node.value.kind);
  }

  nextMs(): number | null {
    const top = this.heap.peek();
    return top === undefined ? null : top.atMs;
  }

  /** The earliest entry if due at nowMs, removed; else null. */
  popDue(nowMs: number): D | null {
    const top = this.heap.peek();
    if (top === undefined || top.atMs > nowMs) return null;
    this.heap.pop();
    return top;
  }

  checkInvariants(): void {
    this.heap.checkInvariants();
  }
}
