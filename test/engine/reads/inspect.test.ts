// Goal: the engine's read-only inspect queries for the dashboard: the
// matching view lists the kinds that asked (capabilities, last ask), the
// signatures no asker may take, and for each the constraint each kind fails,
// the topic's deliveries of items with `prefers` by fit and its held items;
// idByKey finds the live item holding a key; readySinceMs reads the oldest
// ready head. None of them changes what `stats` reports.

import { describe, expect, test } from "bun:test";
import { defaultLimits } from "../../../src/limits.ts";
import { stuckSignaturesListedMax } from "../../../src/limits.ts";
import { Harness, item } from "../support/harness.ts";

describe("matchingView", () => {
  test("lists askers and, per stuck signature, what each kind fails", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { requires: { gpu: "h100" } }), item("t", { requires: { gpu: "h100" } }), item("t", { requires: { mem: { gte: 64 } } }), item("t")]);
    const firstAskMs = h.now;
    await h.dequeue("n", [["t", 1]], { capabilities: { gpu: ["a100", "t4"], mem: 128 } });
    h.clock.advance(1000);
    await h.dequeue("n", [["t", 1]], { capabilities: { os: "linux" } });
    const view = h.engine.matchingView("n", "t", h.now);
    expect(view.topicExists).toBe(true);
    expect(view.askers.map((a) => [a.capabilities, a.lastAskAtMs])).toEqual([
      [{ os: "linux" }, firstAskMs + 1000],
      [{ gpu: ["a100", "t4"], mem: 128 }, firstAskMs],
    ]);
    // The mem item went to the first kind; the plain item to the second; the h100 items are stuck.
    expect(view.stuck).toHaveLength(1);
    const [stuck] = view.stuck;
    expect(stuck?.requires).toEqual({ gpu: "h100" });
    expect(stuck?.items).toBe(2);
    const byKind = new Map(stuck?.misses.map((m) => [view.askers.findIndex((a) => a.kind === m.kind), m.failed]));
    expect(byKind.get(0)).toEqual([{ feature: "gpu", wants: "h100", has: null }]);
    expect(byKind.get(1)).toEqual([{ feature: "gpu", wants: "h100", has: ["a100", "t4"] }]);
    // Read only: stats still reports the same, and a second view is identical.
    expect(h.engine.matchingView("n", "t", h.now)).toEqual(view);
    expect((h.engine.stats(null, h.now) as any).namespaces.n.topics.t.unmatchable.items).toBe(2);
  });

  test("a kind without capabilities fails every signature; asks older than the window are not listed", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { requires: { zone: { ne: "x" } } })]);
    await h.dequeue("n", [["t", 1]], { capabilities: null });
    let view = h.engine.matchingView("n", "t", h.now);
    expect(view.stuck[0]?.misses[0]?.noCapabilities).toBe(true);
    h.clock.advance(defaultLimits.unmatchableAskWindowMs + 1);
    view = h.engine.matchingView("n", "t", h.now);
    expect(view.askers).toEqual([]);
    expect(view.stuck).toEqual([]);
  });

  test("lists at most stuckSignaturesListedMax signatures, most items first", async () => {
    const h = new Harness();
    const items = [];
    for (let i = 0; i <= stuckSignaturesListedMax; i++) items.push(item("t", { requires: { pool: i } }));
    items.push(item("t", { requires: { pool: 0 } }));
    await h.enqueue("n", items);
    await h.dequeue("n", [["t", 1]], { capabilities: { pool: -1 } });
    const view = h.engine.matchingView("n", "t", h.now);
    expect(view.stuck).toHaveLength(stuckSignaturesListedMax);
    expect(view.stuckTruncated).toBe(true);
    expect(view.stuck[0]).toMatchObject({ requires: { pool: 0 }, items: 2 });
  });

  test("an unknown topic or namespace has no view", () => {
    const h = new Harness();
    expect(h.engine.matchingView("nope", "t", h.now)).toMatchObject({ topicExists: false, askers: [], stuck: [], heldItems: 0, fitDeliveries: { full: 0, partial: 0, released: 0 } });
  });

  test("counts the topic's deliveries of items with prefers by fit (full, partial, released) and its held items", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t", { prefers: { repo: "a" } }), item("t", { prefers: { repo: "a" } }), item("t", { prefers: { repo: "a" }, preferWaitMs: 50 }), item("t")]);
    await h.enqueue("n", [item("u", { prefers: { repo: "a" } })]);
    expect(h.engine.matchingView("n", "t", h.now)).toMatchObject({ heldItems: 1, fitDeliveries: { full: 0, partial: 0, released: 0 } });
    expect(await h.dequeue("n", [["t", 1]], { capabilities: { repo: "a" } })).toHaveLength(1);
    // Fit 0 for the two items without a wait: enqueue order, then the plain item; the held item stays.
    expect(await h.dequeue("n", [["t", 3]], { capabilities: { repo: "b" } })).toHaveLength(2);
    expect(h.engine.matchingView("n", "t", h.now)).toMatchObject({ heldItems: 1, fitDeliveries: { full: 1, partial: 1, released: 0 } });
    h.advance(50);
    expect(await h.dequeue("n", [["t", 1]], { capabilities: { repo: "b" } })).toHaveLength(1);
    const view = h.engine.matchingView("n", "t", h.now);
    expect(view).toMatchObject({ heldItems: 0, fitDeliveries: { full: 1, partial: 1, released: 1 } });
    // Per topic: the other topic's item was not delivered.
    expect(h.engine.matchingView("n", "u", h.now).fitDeliveries).toEqual({ full: 0, partial: 0, released: 0 });
    h.check();
  });

  test("items with prefers alone are never stuck; one requires under several preferences is one row", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [
      item("t", { prefers: { repo: "a" }, preferWaitMs: 1000 }),
      item("t", { requires: { gpu: true } }),
      item("t", { requires: { gpu: true }, prefers: { repo: "a" } }),
      item("t", { requires: { gpu: true }, prefers: { repo: "b" }, preferWaitMs: 1000 }),
    ]);
    // Neither asker may take anything now: the first item is held for repo a, the others want a gpu.
    expect(await h.dequeue("n", [["t", 1]], { capabilities: { repo: "b" } })).toEqual([]);
    expect(await h.dequeue("n", [["t", 1]], { capabilities: null })).toEqual([]);
    const view = h.engine.matchingView("n", "t", h.now);
    expect(view.stuck.map((s) => [s.requires, s.items])).toEqual([[{ gpu: true }, 3]]);
    expect(view.heldItems).toBe(2);
  });
});

describe("idByKey and readySinceMs", () => {
  test("finds the live item holding a key, dead letters included, and nothing after it ends", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { key: "k1", maxAttempts: 1 })]);
    expect(h.engine.idByKey("n", "t", "k1")).toBe(id as string);
    expect(h.engine.idByKey("n", "other", "k1")).toBeNull();
    expect(h.engine.idByKey("m", "t", "k1")).toBeNull();
    const [delivery] = await h.dequeue("n", [["t", 1]]);
    await h.engine.nack("n", [{ receipt: delivery!.receipt, delayMs: null, metadata: null }], h.now);
    expect(h.engine.idByKey("n", "t", "k1")).toBe(id as string);
    await h.engine.cancel("n", [id as string], h.now);
    expect(h.engine.idByKey("n", "t", "k1")).toBeNull();
  });

  test("readySinceMs is the oldest deliver_at_ms among the ready heads; null without ready items", async () => {
    const h = new Harness();
    const startMs = h.now;
    await h.enqueue("n", [item("a")]);
    h.clock.advance(500);
    await h.enqueue("n", [item("a", { requires: { gpu: "x" } }), item("b", { delayMs: 10_000 })]);
    expect(h.engine.readySinceMs("n", ["a", "b", "missing"])).toEqual([startMs, null, null]);
    expect(h.engine.readySinceMs("other", ["a"])).toEqual([null]);
  });
});
