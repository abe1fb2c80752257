// The at_least_once leases granted but not yet written (ItemStates.lease;
// limits.ts's leaseWriteDelayMs says why they wait), and the one deadline
// that has them written. Each item is listed once per lease, in the order the
// leases were granted; what to write is decided when they are taken (an item
// acked, nacked or expired since needs nothing: its own write carried its
// state). Beside each item is the copy of its stored value its delivery read,
// so the write patches that copy instead of reading the value again (one LMDB
// read per lease, not two), or null when the delivery read a view (a store
// that offers them, 044: the write reads the value when it comes due, which
// most leases never do).
//
// When they are written: the deadline comes when the oldest lease listed is
// leaseWriteDelayMs old, and takes it with every lease granted up to
// leaseWriteBatchMs after it; the rest wait for the next deadline, armed for
// the oldest of them. So every lease waits between leaseWriteDelayMs -
// leaseWriteBatchMs and leaseWriteDelayMs (plus the timer's lateness), a
// crash forgets at most leaseWriteDelayMs of them, and a job shorter than
// the lower bound never has its lease written.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import { leaseWriteBatchMs, leaseWriteDelayMs } from "../../limits.ts";
import { Deadline, DeadlineKind } from "./deadlines.ts";
import type { EngineDeadlines, LeaseWritesDeadline } from "./engine-deadlines.ts";
import type { LiveItem } from "../state/item.ts";

export interface LeasesToWrite {
  items: LiveItem[];
  /** storedCopies[i] is items[i]'s stored value as its delivery read it, or null (a view was read). */
  storedCopies: Array<Uint8Array | null>;
}

export class DeferredLeaseWrites {
  private items: LiveItem[] = [];
  private storedCopies: Array<Uint8Array | null> = [];
  /** leasedAtMs[i]: when items[i] was leased (the op's nowMs). */
  private leasedAtMs: number[] = [];
  /**
   * Entries before this index were taken already. The lists are a queue:
   * taking a due prefix moves this instead of shifting every later entry
   * (with a 250 ms window a busy server lists tens of thousands), and the
   * taken entries are cut off once they are half the lists.
   */
  private head = 0;
  private timer: HeapNode<LeaseWritesDeadline> | null = null;

  constructor(private readonly deadlines: EngineDeadlines) {}

  /** Leases listed and not yet taken. */
  get size(): number {
    return this.items.length - this.head;
  }

  add(item: LiveItem, storedCopy: Uint8Array | null, nowMs: number): void {
    this.items.push(item);
    this.storedCopies.push(storedCopy);
    this.leasedAtMs.push(nowMs);
    this.arm();
  }

  /**
   * The deadline came: the oldest lease listed, and every one granted up to
   * leaseWriteBatchMs after it, in lease order, out of the list; the
   * deadline is armed again for the oldest of the rest.
   */
  takeDue(): LeasesToWrite {
    const count = this.items.length;
    const head = this.head;
    if (count === head) return { items: [], storedCopies: [] };
    const lastMs = (this.leasedAtMs[head] as number) + leaseWriteBatchMs;
    // The oldest is due (its deadline came); listed in lease order, so the batch is a prefix.
    let end = head + 1;
    while (end < count && (this.leasedAtMs[end] as number) <= lastMs) end++;
    if (end === count) return this.takeAll();
    const taken = { items: this.items.slice(head, end), storedCopies: this.storedCopies.slice(head, end) };
    // The taken entries' slots no longer hold their items (nothing keeps them alive).
    this.items.fill(undefined as unknown as LiveItem, head, end);
    this.storedCopies.fill(null, head, end);
    this.head = end;
    if (end * 2 > count) this.compact();
    this.arm();
    return taken;
  }

  /** Every lease listed, in lease order (a graceful shutdown); the list starts anew and the deadline is dropped. */
  takeAll(): LeasesToWrite {
    const head = this.head;
    const taken = head === 0 ? { items: this.items, storedCopies: this.storedCopies } : { items: this.items.slice(head), storedCopies: this.storedCopies.slice(head) };
    if (taken.items.length === 0) return taken;
    this.items = [];
    this.storedCopies = [];
    this.leasedAtMs = [];
    this.head = 0;
    if (this.timer !== null && this.timer.inHeap) this.deadlines.cancel(this.timer);
    this.timer = null;
    return taken;
  }

  /** Cut off the taken entries. */
  private compact(): void {
    const head = this.head;
    this.items.splice(0, head);
    this.storedCopies.splice(0, head);
    this.leasedAtMs.splice(0, head);
    this.head = 0;
  }

  /** The deadline, for the oldest lease listed, unless one is pending. */
  private arm(): void {
    if (this.items.length === this.head || (this.timer !== null && this.timer.inHeap)) return;
    this.timer = this.deadlines.schedule(new Deadline((this.leasedAtMs[this.head] as number) + leaseWriteDelayMs, DeadlineKind.LeaseWrites, null));
  }
}
