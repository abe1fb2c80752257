// One beanstalkd connection's state: the tube it uses, the tubes it watches
// (in the order watched, as list-tubes-watched shows them), the jobs it has
// reserved (each with its receipt, so delete/release/bury/touch act on that
// delivery only), and whether it is a producer, a worker, or waiting.

import type { HeapNode } from "../lib/pairing-heap.ts";

export interface Reservation {
  /** The connection holding it. */
  session: Session;
  /** Its entry in the ReservationBook while held. */
  node: HeapNode<Reservation> | null;
  orqId: string;
  jobId: string;
  tube: string;
  receipt: string;
  /** The job's TTR as a lease: what touch extends it by. */
  ttrMs: number;
  expiresAtMs: number;
}

export class Session {
  use = "default";
  readonly watch: string[] = ["default"];
  /** Reserved jobs by orq id (added and removed through the ReservationBook). */
  readonly reservations = new Map<string, Reservation>();
  producer = false;
  worker = false;
  waiting = false;
  closed = false;

  constructor(
    readonly id: number,
    /** The engine waiter owner of this connection's reserves (negative: never a MessagePack connection's id). */
    readonly owner: number,
  ) {}

  /** The reservation whose lease ends first, or null. */
  soonestReservation(): Reservation | null {
    let soonest: Reservation | null = null;
    for (const r of this.reservations.values()) if (soonest === null || r.expiresAtMs < soonest.expiresAtMs) soonest = r;
    return soonest;
  }
}
