// The codes every version of the record encoding shares (record kinds, item
// flag bits, state and outcome codes) and the error a bad value raises. A
// leaf of its own so the current item layout (item-record.ts), the older
// readers (record-readers-legacy.ts) and the codec (record-codec.ts) can all
// use them without importing one another in a circle.

import type { Outcome, StoredState } from "./record.ts";

export const RecordKind = { item: 1, outcome: 2, meta: 3, pause: 4, policy: 5, schedule: 6 } as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

/** A value that is not a record this version of orq can read. */
export class RecordDecodeError extends Error {
  override name = "RecordDecodeError";
}

export const itemFlag = {
  ttl: 1,
  leaseExpires: 2,
  deadReason: 4,
  requires: 8,
  after: 16,
  key: 32,
  atMostOnce: 64,
  /** From record version 4 on: the item names a group (earlier versions never set this bit). */
  group: 128,
} as const;

export const stateCodes: readonly StoredState[] = ["pending", "leased", "dead"];
export const outcomeCodes: readonly Outcome[] = ["acked", "cancelled", "expired"];

/** The fixed part of an item, as each version's reader finds it. */
export interface ItemHead {
  priority: number;
  enqueuedAtMs: number;
  deliverAtMs: number;
  leaseMs: number;
  ttlExpiresAtMs: number | null;
  maxAttempts: number;
  attempt: number;
  deliveries: number;
  leaseBoot: number;
  state: StoredState;
  leaseExpiresAtMs: number | null;
}
