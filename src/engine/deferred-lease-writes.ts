// The at_least_once leases granted but not yet written (ItemStates.lease;
// limits.ts's leaseWriteDelayMs says why they wait), and the one deadline
// that has them written. Each item is listed once per lease; what to write
// is decided when they are taken (an item acked, nacked or expired since
// needs nothing: its own write carried its state). Beside each item is the
// copy of its stored value its delivery read, so the write patches that copy
// instead of reading the value again (one LMDB read per lease, not two).

import type { HeapNode } from "../lib/pairing-heap.ts";
import { leaseWriteDelayMs } from "../limits.ts";
import { Deadline, DeadlineKind } from "./deadlines.ts";
import type { EngineDeadlines, LeaseWritesDeadline } from "./engine-deadlines.ts";
import type { LiveItem } from "./item.ts";

export class DeferredLeaseWrites {
  private items: LiveItem[] = [];
  /** storedCopies[i] is items[i]'s stored value as its delivery read it. */
  private storedCopies: Uint8Array[] = [];
  private timer: HeapNode<LeaseWritesDeadline> | null = null;

  constructor(private readonly deadlines: EngineDeadlines) {}

  add(item: LiveItem, storedCopy: Uint8Array, nowMs: number): void {
    this.items.push(item);
    this.storedCopies.push(storedCopy);
    if (this.timer === null || !this.timer.inHeap) {
      this.timer = this.deadlines.schedule(new Deadline(nowMs + leaseWriteDelayMs, DeadlineKind.LeaseWrites, null));
    }
  }

  /** Every item listed so far, in lease order, with its stored copy; the lists start anew and the deadline is dropped. */
  take(): { items: LiveItem[]; storedCopies: Uint8Array[] } {
    const items = this.items;
    const storedCopies = this.storedCopies;
    if (items.length === 0) return { items, storedCopies };
    this.items = [];
    this.storedCopies = [];
    if (this.timer !== null && this.timer.inHeap) this.deadlines.cancel(this.timer);
    this.timer = null;
    return { items, storedCopies };
  }
}
