// What the client side of a crash round knows for certain: which enqueues,
// deliveries and acks got an ok reply before the SIGKILL, and which were sent
// but never answered (their outcome is unknown). The verify phase checks the
// restarted server against exactly these facts. Every item carries a unique
// idempotency key, and its payload is that key, so a delivery can be traced
// back to its enqueue even when the enqueue's reply was lost.

export type DeliveryMode = "at_least_once" | "at_most_once";

export interface TrackedItem {
  key: string;
  topic: string;
  delivery: DeliveryMode;
  /** From the enqueue's ok reply; null while unanswered (maybe stored, maybe not). */
  id: string | null;
  /** Ids seen in deliveries carrying this key (more than one = a duplicate). */
  seenIds: Set<string>;
  /** Receipts of every delivery whose reply arrived, oldest first. */
  receipts: string[];
  /** Highest `attempt` of a delivery reply received. */
  attemptSeenMax: number;
  /** An ack was sent for some delivery of this item. */
  ackSent: boolean;
  /** An ack reply listed this item's receipt as not stale: the item ended acked. */
  ackOk: boolean;
  /** `attempt` of the delivery whose ack succeeded. */
  ackedAttempt: number;
  /** Highest `attempt` of a delivery an ack was sent for (answered or not). */
  ackSentAttemptMax: number;
  /** Every nack sent for a delivery of this item (one per delivery at most), oldest first. */
  nacks: NackSent[];
  /** Per delivery attempt: the lowest lease end an extend with an ok reply guarantees (server time). */
  extendedLeaseMinByAttempt: Map<number, number>;
}

export interface NackSent {
  /** `attempt` of the delivery it ended. */
  attempt: number;
  /** The metadata it carried (as text), or null when it carried none. */
  metadata: string | null;
  delayed: boolean;
  /** The nack reply listed its receipt as not stale. */
  ok: boolean;
}

/** A broken promise of the server, found by the checker. */
export interface Violation {
  round: number;
  kind: string;
  detail: string;
}

export class RoundModel {
  readonly items = new Map<string, TrackedItem>();
  readonly violations: Violation[] = [];
  /** Counters for the summary. */
  enqueueRepliesOk = 0;
  enqueueUnanswered = 0;
  deliveriesReplied = 0;
  acksOk = 0;
  acksUnanswered = 0;
  nacksOk = 0;
  nacksUnanswered = 0;
  extendsOk = 0;
  /** Coverage: live items checked after a nack with an ok reply, and extended leases found at restart. */
  nackedChecked = 0;
  extendedChecked = 0;
  /** Coverage of the checks after the restart (so a run can show it tested something). */
  leasedAtRestart = 0;
  atMostOnceDeliveredChecked = 0;
  keysReenqueuedLive = 0;
  unansweredFoundStored = 0;
  private nextSeq = 0;

  constructor(
    readonly round: number,
    readonly ns: string,
    readonly topicAtLeastOnce: string,
    readonly topicAtMostOnce: string,
  ) {}

  newItem(delivery: DeliveryMode): TrackedItem {
    const item: TrackedItem = {
      key: `r${this.round}-k${this.nextSeq++}`,
      topic: delivery === "at_least_once" ? this.topicAtLeastOnce : this.topicAtMostOnce,
      delivery,
      id: null,
      seenIds: new Set(),
      receipts: [],
      attemptSeenMax: 0,
      ackSent: false,
      ackOk: false,
      ackedAttempt: 0,
      ackSentAttemptMax: 0,
      nacks: [],
      extendedLeaseMinByAttempt: new Map(),
    };
    this.items.set(item.key, item);
    return item;
  }

  violation(kind: string, detail: string): void {
    this.violations.push({ round: this.round, kind, detail });
  }

  /** The one id the item is known by (enqueue reply, else a delivery), or null. */
  knownId(item: TrackedItem): string | null {
    if (item.id !== null) return item.id;
    const [first] = item.seenIds;
    return first ?? null;
  }
}

/** Ids acked with an ok reply, across every round: none may ever come back. */
export class AckedLedger {
  readonly ids = new Set<string>();
  /** Ids already reported lost, so a later round does not report them again. */
  readonly reported = new Set<string>();
}
