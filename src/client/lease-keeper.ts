// The worker loop's lease keeper: one timer for all of a loop's running
// handlers, and one extend request for every lease due at once, as the
// Python loops do. A handler's lease is extended every `everyMs` from when
// it was taken; the leases are kept in the order they fall due (each new or
// renewed one is due last, as every interval is the same), so a firing looks
// only at the front. A receipt an extend reports stale is lost: it is
// extended no more, and its handler is told (onLost) if it still runs.
// One request carries at most the loop's running handlers, so at most
// workConcurrencyMax (1,000) receipts: one request's id limit.

import type { Delivery } from "./types.ts";

/** What the keeper asks of the client (worker.ts's WorkerClient has it). */
export interface ExtendingClient {
  extend(ns: string, items: Array<{ receipt: string; leaseMs: number }>): Promise<{ extended: number; stale: string[] }>;
}

/** What the keeper reports: worker.ts's WorkerEvent includes these. */
export type LeaseEvent =
  | { kind: "extended"; delivery: Delivery; leaseMs: number }
  | { kind: "lease_lost"; delivery: Delivery }
  | { kind: "error"; during: "extend"; error: unknown; delivery: Delivery };

interface KeptLease {
  readonly delivery: Delivery;
  /** When the next extend is due (the keeper's clock, ms). */
  dueMs: number;
  readonly onLost: () => void;
}

/** The keeper's clock and its one timer (real ones but in tests). */
export interface KeeperTimers {
  nowMs(): number;
  /** Run `fn` once after `delayMs`, without keeping the process alive for it. */
  after(delayMs: number, fn: () => void): void;
}

const realTimers: KeeperTimers = {
  nowMs: () => performance.now(),
  after(delayMs, fn) {
    // Unreferenced: a firing left pending after the loop stopped must not hold the process open.
    setTimeout(fn, delayMs).unref();
  },
};

export class LeaseKeeper {
  /** By receipt, in the order the leases fall due (a Map keeps insertion order). */
  private readonly held = new Map<string, KeptLease>();
  /**
   * Whether a firing is pending. It stays pending when the last lease is
   * released: a loop that takes and releases a lease per item would
   * otherwise set and clear a timer per item (about 3 µs each in Bun); a
   * firing that finds nothing due arms for the first lease kept, if any.
   */
  private armed = false;

  constructor(
    private readonly client: ExtendingClient,
    private readonly ns: string,
    private readonly leaseMs: number,
    private readonly everyMs: number,
    private readonly emit: (event: LeaseEvent) => void,
    private readonly timers: KeeperTimers = realTimers,
  ) {}

  /** Keep `delivery`'s lease alive until release(); onLost runs if an extend finds it stale first. */
  keep(delivery: Delivery, onLost: () => void): void {
    this.held.set(delivery.receipt, { delivery, dueMs: this.timers.nowMs() + this.everyMs, onLost });
    if (!this.armed) this.arm();
  }

  /** The handler has returned: no more extends for it. */
  release(delivery: Delivery): void {
    this.held.delete(delivery.receipt);
  }

  /** Leases kept now. */
  get size(): number {
    return this.held.size;
  }

  /** A timer for the lease due first, if any. */
  private arm(): void {
    const first = this.held.values().next();
    if (first.done === true) return;
    this.armed = true;
    this.timers.after(Math.max(0, first.value.dueMs - this.timers.nowMs()), () => this.fire());
  }

  private fire(): void {
    this.armed = false;
    const nowMs = this.timers.nowMs();
    const due: KeptLease[] = [];
    for (const lease of this.held.values()) {
      if (lease.dueMs > nowMs) break;
      due.push(lease);
    }
    // Renewed leases go to the back, due last.
    for (const lease of due) {
      this.held.delete(lease.delivery.receipt);
      lease.dueMs = nowMs + this.everyMs;
      this.held.set(lease.delivery.receipt, lease);
    }
    if (due.length > 0) this.extend(due);
    this.arm();
  }

  private extend(due: KeptLease[]): void {
    const leaseMs = this.leaseMs;
    this.client.extend(this.ns, due.map((lease) => ({ receipt: lease.delivery.receipt, leaseMs }))).then(
      (result) => {
        const stale = result.stale.length === 0 ? null : new Set(result.stale);
        for (const lease of due) {
          const receipt = lease.delivery.receipt;
          if (stale === null || !stale.has(receipt)) {
            this.emit({ kind: "extended", delivery: lease.delivery, leaseMs });
          } else if (this.held.get(receipt) === lease) {
            // Still running: it stops being extended, and its handler learns the work will not count.
            this.release(lease.delivery);
            this.emit({ kind: "lease_lost", delivery: lease.delivery });
            lease.onLost();
          }
        }
      },
      (error: unknown) => {
        for (const lease of due) this.emit({ kind: "error", during: "extend", error, delivery: lease.delivery });
      },
    );
  }
}
