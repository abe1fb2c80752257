// The one deadline structure: a pairing heap of every timed event (delay due,
// lease expiry, TTL, waiter timeout, outcome retention end, pause end). The engine's
// tick() pops what is due; the server arms one timer from the earliest entry.
// Nothing else in the engine keeps a timer.

import { assert } from "../lib/assert.ts";
import { type HeapNode, PairingHeap } from "../lib/pairing-heap.ts";
import type { LiveItem } from "./item.ts";
import type { RetainedOutcome } from "./outcome-table.ts";
import type { TopicPause } from "./pause.ts";
import type { Waiter } from "./waiters.ts";

export const DeadlineKind = {
  Due: 0,
  Lease: 1,
  Ttl: 2,
  WaiterTimeout: 3,
  OutcomeRetention: 4,
  /** A timed pause ends (pause.ts). */
  PauseEnd: 5,
} as const;
export type DeadlineKind = (typeof DeadlineKind)[keyof typeof DeadlineKind];

export class Deadline {
  constructor(
    /** Mutable so an item's timer node can be reused for its next delay or lease (fewer long-lived allocations). */
    public atMs: number,
    public seq: number,
    public kind: DeadlineKind,
    readonly item: LiveItem | null,
    readonly waiter: Waiter | null,
    readonly outcome: RetainedOutcome | null,
    readonly pause: TopicPause | null = null,
  ) {}
}

const deadlineLess = (a: Deadline, b: Deadline) => a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);

export class DeadlineQueue {
  private readonly heap = new PairingHeap<Deadline>(deadlineLess);
  private seq = 0;
  /** Called when a new entry becomes the earliest, so the owner of the one timer can re-arm it. */
  onEarlier: (() => void) | null = null;

  get size(): number {
    return this.heap.size;
  }

  schedule(
    atMs: number,
    kind: DeadlineKind,
    item: LiveItem | null,
    waiter: Waiter | null,
    outcome: RetainedOutcome | null,
    pause: TopicPause | null = null,
  ): HeapNode<Deadline> {
    const before = this.heap.peek();
    const node = this.heap.insert(new Deadline(atMs, this.seq++, kind, item, waiter, outcome, pause));
    if (this.onEarlier !== null && (before === undefined || atMs < before.atMs)) this.onEarlier();
    return node;
  }

  /** Schedule an item's delay or lease deadline, reusing its previous (idle) timer node when it has one. */
  scheduleItem(spare: HeapNode<Deadline> | null, atMs: number, kind: DeadlineKind, item: LiveItem): HeapNode<Deadline> {
    if (spare === null || spare.inHeap) return this.schedule(atMs, kind, item, null, null);
    const d = spare.value;
    assert(d.item === item, "deadlines: reusing another item's timer node");
    const before = this.heap.peek();
    d.atMs = atMs;
    d.seq = this.seq++;
    d.kind = kind;
    this.heap.insertNode(spare);
    if (this.onEarlier !== null && (before === undefined || atMs < before.atMs)) this.onEarlier();
    return spare;
  }

  cancel(node: HeapNode<Deadline>): void {
    this.heap.remove(node);
  }

  /** Move an entry to a new instant (a lease extended or shortened); returns the new handle. */
  reschedule(node: HeapNode<Deadline>, atMs: number): HeapNode<Deadline> {
    this.heap.remove(node);
    const before = this.heap.peek();
    node.value.atMs = atMs;
    node.value.seq = this.seq++;
    this.heap.insertNode(node);
    if (this.onEarlier !== null && (before === undefined || atMs < before.atMs)) this.onEarlier();
    return node;
  }

  nextMs(): number | null {
    const top = this.heap.peek();
    return top === undefined ? null : top.atMs;
  }

  /** The earliest entry if due at nowMs, removed; else null. */
  popDue(nowMs: number): Deadline | null {
    const top = this.heap.peek();
    if (top === undefined || top.atMs > nowMs) return null;
    this.heap.pop();
    return top;
  }

  checkInvariants(): void {
    this.heap.checkInvariants();
  }
}
