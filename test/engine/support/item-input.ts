// An enqueue input for one item with the contract's defaults (priority 0,
// empty payload and metadata, no delay, lease, TTL, requirements, dependencies
// or key), for engine tests and benchmarks; callers override what they probe.
// Kept apart from the harness so benchmarks can build inputs without bun:test.

import type { EnqueueItemInput } from "../../../src/engine/api.ts";

export function item(topic: string, overrides: Partial<EnqueueItemInput> = {}): EnqueueItemInput {
  return {
    topic,
    priority: 0,
    payload: new Uint8Array(0),
    metadata: new Uint8Array(0),
    deliverAtMs: null,
    delayMs: null,
    leaseMs: null,
    ttlMs: null,
    delivery: "at_least_once",
    maxAttempts: 10,
    requires: null,
    after: null,
    key: null,
    ...overrides,
  };
}
