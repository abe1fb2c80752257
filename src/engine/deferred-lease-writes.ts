// The at_least_once leases granted but not yet written (ItemStates.lease;
// limits.ts's leaseWriteDelayMs says why they wait), and the one deadline
// that has them written. Each item is listed once per lease; what to write
// is decided when they are taken (an item acked, nacked or expired since
// needs nothing: its own write carried its state).

import type { HeapNode } from "../lib/pairing-heap.ts";
import { leaseWriteDelayMs } from "../limits.ts";
import { type Deadline, DeadlineKind, type DeadlineQueue } from "./deadlines.ts";
import type { LiveItem } from "./item.ts";

export class DeferredLeaseWrites {
  private items: LiveItem[] = [];
  private timer: HeapNode<Deadline> | null = null;

  constructor(private readonly deadlines: DeadlineQueue) {}

  add(item: LiveItem, nowMs: number): void {
    this.items.push(item);
    if (this.timer === null || !this.timer.inHeap) {
      this.timer = this.deadlines.schedule(nowMs + leaseWriteDelayMs, DeadlineKind.LeaseWrites, null, null, null);
    }
  }

  /** Every item listed so far, in lease order; the list starts anew and its deadline is dropped. */
  take(): LiveItem[] {
    const items = this.items;
    if (items.length === 0) return items;
    this.items = [];
    if (this.timer !== null && this.timer.inHeap) this.deadlines.cancel(this.timer);
    this.timer = null;
    return items;
  }
}
