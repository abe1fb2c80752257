// Records for storage tests: a plain pending item, and one with every optional
// field set, so round trips cover each flag of the record format.

import type { ItemRecord, OutcomeRecord } from "../../src/storage/record.ts";

export function itemRecord(overrides: Partial<ItemRecord> = {}): ItemRecord {
  return {
    ns: "billing",
    topic: "invoices",
    priority: 5,
    payload: new Uint8Array([1, 2, 3, 4]),
    metadata: new Uint8Array(0),
    enqueuedAtMs: 1_700_000_000_000,
    deliverAtMs: 1_700_000_000_000,
    leaseMs: 30_000,
    ttlExpiresAtMs: null,
    delivery: "at_least_once",
    maxAttempts: 10,
    attempt: 0,
    deliveries: 0,
    state: "pending",
    leaseExpiresAtMs: null,
    deadReason: null,
    requires: null,
    after: null,
    key: null,
    ...overrides,
  };
}

export function fullItemRecord(): ItemRecord {
  return itemRecord({
    ns: "ns-é",
    topic: "topic/ünïcode/🚀",
    priority: -42,
    payload: new Uint8Array(300).map((_, index) => index & 0xff),
    metadata: new TextEncoder().encode('{"trace":"abc"}'),
    ttlExpiresAtMs: 1_700_000_360_000,
    delivery: "at_most_once",
    maxAttempts: 3,
    attempt: 2,
    deliveries: 7,
    state: "dead",
    leaseExpiresAtMs: 1_700_000_030_000,
    deadReason: "dependency 3:17 cancelled",
    requires: { gpu: { in: ["a100", "h100"] }, memory_gb: { gte: 40 }, region: "eu" },
    after: ["0:1", "3:17", "15:9007199254740991"],
    key: "order-123",
  });
}

export function outcomeRecord(overrides: Partial<OutcomeRecord> = {}): OutcomeRecord {
  return { ns: "billing", outcome: "acked", endedAtMs: 1_700_000_100_000, ...overrides };
}
