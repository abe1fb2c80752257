// Every reservation of every connection, by when its TTR ends, so a timed-out
// reservation is noticed (and counted in job-timeouts and the job's
// `timeouts`) at the first command after it ends, whichever connection sends
// it. The engine has already released the job by then (its lease expired);
// this book only forgets the receipt. One heap, one sweep per command.

import { PairingHeap } from "../lib/pairing-heap.ts";
import type { Reservation, Session } from "./session.ts";

export class ReservationBook {
  private readonly heap = new PairingHeap<Reservation>((a, b) => a.expiresAtMs < b.expiresAtMs);

  get size(): number {
    return this.heap.size;
  }

  add(session: Session, reservation: Reservation): void {
    reservation.node = this.heap.insert(reservation);
    session.reservations.set(reservation.orqId, reservation);
  }

  remove(session: Session, reservation: Reservation): void {
    const node = reservation.node;
    if (node !== null && node.inHeap) this.heap.remove(node);
    reservation.node = null;
    session.reservations.delete(reservation.orqId);
  }

  /** The reservation's TTR starts again (touch). */
  extend(reservation: Reservation, expiresAtMs: number): void {
    reservation.expiresAtMs = expiresAtMs;
    if (reservation.node !== null && reservation.node.inHeap) this.heap.update(reservation.node);
  }

  /** Forget reservations whose TTR ended at or before nowMs; `onExpired` counts each. */
  sweep(nowMs: number, onExpired: (reservation: Reservation) => void): void {
    for (let top = this.heap.peek(); top !== undefined && top.expiresAtMs <= nowMs; top = this.heap.peek()) {
      this.heap.pop();
      top.node = null;
      top.session.reservations.delete(top.orqId);
      onExpired(top);
    }
  }
}
