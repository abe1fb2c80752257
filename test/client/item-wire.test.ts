// Goal: the client puts the contract's newer item fields on the wire and
// reads them back: `prefers`, `prefer_wait_ms` and `trace` in an enqueue's
// items (an item's own trace wins over the active one), in deliveries and in
// item states; an ended item's `result`; a schedule's request fields and its
// stored form read back as the EnqueueItem it was given as. Pure
// conversions, no server: the e2e side is test/client/new-ops.test.ts.

import { describe, expect, test } from "bun:test";
import { encode } from "@msgpack/msgpack";
import { anyStateFromWire, deliveryFromWire, enqueueItemFromWire, enqueueItemToWire, itemStateFromWire } from "../../src/client/item-wire.ts";
import { scheduleFromWire, scheduleRequestFields } from "../../src/client/schedule-wire.ts";
import type { EnqueueItem } from "../../src/client/types.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("enqueue items", () => {
  test("prefers, prefer_wait_ms and trace go in snake_case", () => {
    const wire = enqueueItemToWire({ topic: "t", prefers: { gpu: { gte: 2, weight: 5 } }, preferWaitMs: 2_000, trace }, undefined);
    expect(wire.prefers).toEqual({ gpu: { gte: 2, weight: 5 } });
    expect(wire.prefer_wait_ms).toBe(2_000);
    expect(wire.trace).toBe(trace);
  });

  test("an item without trace takes the active one; an item with its own keeps it", () => {
    expect(enqueueItemToWire({ topic: "t" }, trace).trace).toBe(trace);
    expect(enqueueItemToWire({ topic: "t", trace: "mine" }, trace).trace).toBe("mine");
    expect(enqueueItemToWire({ topic: "t" }, undefined).trace).toBeUndefined();
  });

  test("absent fields are left off the encoded map", () => {
    const encoded = encode(enqueueItemToWire({ topic: "t" }, undefined), { ignoreUndefined: true });
    expect(encoded).toEqual(encode({ topic: "t" }));
  });
});

describe("replies", () => {
  test("a delivery carries its trace back, and none when the server sent none", () => {
    const base = { id: "0:1", topic: "t", priority: 0, payload: bytes(""), metadata: bytes(""), attempt: 1, receipt: "0:1:1:1", lease_expires_at_ms: 5, enqueued_at_ms: 1 };
    expect(deliveryFromWire({ ...base, trace }).trace).toBe(trace);
    expect("trace" in deliveryFromWire(base)).toBe(false);
  });

  test("an item state carries prefers, prefer_wait_ms and trace", () => {
    const state = itemStateFromWire({
      id: "0:1",
      topic: "t",
      state: "ready",
      priority: 0,
      payload: bytes("p"),
      metadata: bytes("m"),
      attempt: 0,
      deliver_at_ms: 1,
      enqueued_at_ms: 1,
      prefers: { zone: "eu" },
      prefer_wait_ms: 500,
      trace,
    });
    expect(state).toMatchObject({ prefers: { zone: "eu" }, preferWaitMs: 500, trace });
  });

  test("an ended item carries its result (a copy), and none when its ack gave none", () => {
    const result = bytes("done");
    const ended = anyStateFromWire({ id: "0:1", state: "ended", outcome: "acked", result });
    expect(ended).toEqual({ id: "0:1", state: "ended", outcome: "acked", result: bytes("done") });
    expect((ended as { result: Uint8Array }).result).not.toBe(result);
    expect(anyStateFromWire({ id: "0:2", state: "ended", outcome: "cancelled" })).toEqual({ id: "0:2", state: "ended", outcome: "cancelled" });
    expect(anyStateFromWire(null)).toBeNull();
  });
});

describe("schedules", () => {
  const item: EnqueueItem = { topic: "emails", priority: 2, payload: "digest", group: "acme", requires: { region: "eu" }, ttlMs: 60_000 };

  test("a schedule request names its fields in snake_case, its item as enqueue sends one", () => {
    const fields = scheduleRequestFields({ name: "digest", cron: "0 8 * * 1-5", timezone: "Europe/Paris", item, catchUp: "none" });
    expect(fields).toMatchObject({ name: "digest", cron: "0 8 * * 1-5", timezone: "Europe/Paris", catch_up: "none" });
    expect(fields.item).toMatchObject({ topic: "emails", priority: 2, payload: bytes("digest"), group: "acme", requires: { region: "eu" }, ttl_ms: 60_000 });
    expect(scheduleRequestFields({ name: "s", everyMs: 1_000, item: { topic: "t" } })).toMatchObject({ every_ms: 1_000 });
  });

  test("a stored schedule reads back in camelCase, its item as the EnqueueItem given", () => {
    const wireItem = scheduleRequestFields({ name: "digest", cron: "0 8 * * *", item }).item as Record<string, unknown>;
    const schedule = scheduleFromWire({ name: "digest", cron: "0 8 * * *", timezone: "UTC", item: wireItem, catch_up: "one", next_at_ms: 100, last_at_ms: 40, last_id: "3:9" });
    expect(schedule).toEqual({
      name: "digest",
      cron: "0 8 * * *",
      timezone: "UTC",
      item: { ...item, payload: bytes("digest") },
      catchUp: "one",
      nextAtMs: 100,
      lastAtMs: 40,
      lastId: "3:9",
    });
    expect(enqueueItemFromWire({ topic: "t", every_ms: 5 })).toEqual({ topic: "t" });
  });
});
