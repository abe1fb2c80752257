// Goal: the server-wide maxima of live items, topics and namespaces
// (limits.liveItemsMax, topicsMax, namespacesMax; engine/admission/capacity.ts). Each
// refusal is TOO_LARGE at the input the contract names and stores nothing
// of the batch; an idempotent repeat creates nothing and passes at the
// maximum; room comes back when items end; a pause of a new topic counts; and
// a restart over a lowered maximum loads and serves every stored item while
// refusing new ones until the count is under it. Small maxima via the
// harness's limits; a MemoryStore restart stands in for a process restart.

import { describe, expect, test } from "bun:test";
import type { Limits } from "../../../src/limits.ts";
import { failure, Harness, item } from "../support/harness.ts";

function engineGauges(h: Harness): { items: number; topics: number; namespaces: number } {
  return (h.engine.stats(null, h.now) as { engine: { items: number; topics: number; namespaces: number } }).engine;
}

describe("live items maximum", () => {
  test("a batch that would pass it is TOO_LARGE on `items`, and nothing of it is stored", async () => {
    const h = new Harness({ limits: { liveItemsMax: 5 } });
    await h.enqueue("n", [item("a"), item("a"), item("b")]);
    const refused = failure(h.engine.enqueue("n", [item("a"), item("c"), item("c")], h.now));
    expect(refused.kind).toBe("over_limit");
    expect(refused.at).toEqual({ kind: "batch" });
    expect(refused.message).toContain("live_items_max (5)");
    expect(engineGauges(h)).toEqual(expect.objectContaining({ items: 3, topics: 2 }));
    h.check();
    // Exactly up to the maximum is allowed.
    await h.enqueue("n", [item("a"), item("c")]);
    expect(engineGauges(h).items).toBe(5);
    expect(failure(h.engine.enqueue("n", [item("a")], h.now)).at).toEqual({ kind: "batch" });
  });

  test("an idempotent repeat creates nothing and is answered at the maximum", async () => {
    const h = new Harness({ limits: { liveItemsMax: 2 } });
    const [first] = await h.enqueue("n", [item("a", { key: "k1" }), item("a", { key: "k2" })]);
    const again = await h.enqueue("n", [item("a", { key: "k1" })]);
    expect(again).toEqual([first as string]);
    expect(failure(h.engine.enqueue("n", [item("a", { key: "k1" }), item("a", { key: "k3" })], h.now)).at).toEqual({ kind: "batch" });
  });

  test("room comes back as items end, dead letters count until they end", async () => {
    const h = new Harness({ limits: { liveItemsMax: 2 } });
    const [, id] = await h.enqueue("n", [item("a"), item("a", { maxAttempts: 1 })]);
    expect(failure(h.engine.enqueue("n", [item("a")], h.now)).kind).toBe("over_limit");
    const delivered = await h.dequeue("n", [["a", 2]]);
    await h.settleAck(h.engine.ack("n", [delivered[0]!.receipt], h.now));
    await h.settle(h.engine.nack("n", [{ receipt: delivered[1]!.receipt, delayMs: null, metadata: null }], h.now));
    expect(h.state("n", id!)).toBe("dead");
    await h.enqueue("n", [item("a")]);
    expect(failure(h.engine.enqueue("n", [item("b")], h.now)).kind).toBe("over_limit");
    await h.settle(h.engine.cancel("n", [id!], h.now));
    await h.enqueue("n", [item("b")]);
    h.check();
  });
});

describe("topics maximum", () => {
  test("a new topic past it is TOO_LARGE on that item's topic; known topics still take items", async () => {
    const h = new Harness({ limits: { topicsMax: 3 } });
    await h.enqueue("n", [item("a"), item("b")]);
    const refused = failure(h.engine.enqueue("n", [item("a"), item("c"), item("c"), item("d"), item("a")], h.now));
    expect(refused.kind).toBe("over_limit");
    expect(refused.at).toEqual({ kind: "item", index: 3, part: { of: "topic" } });
    expect(refused.message).toContain("topics_max 3");
    expect(engineGauges(h)).toEqual(expect.objectContaining({ items: 2, topics: 2 }));
    // Topics count over all namespaces.
    expect(failure(h.engine.enqueue("m", [item("x"), item("y")], h.now)).at).toEqual({ kind: "item", index: 1, part: { of: "topic" } });
    await h.enqueue("m", [item("x")]);
    await h.enqueue("n", [item("a"), item("b")]);
    expect(failure(h.engine.enqueue("n", [item("c")], h.now)).at).toEqual({ kind: "item", index: 0, part: { of: "topic" } });
    h.check();
  });

  test("a topic that empties is dropped and frees its place", async () => {
    const h = new Harness({ limits: { topicsMax: 1 } });
    await h.enqueue("n", [item("a")]);
    expect(failure(h.engine.enqueue("n", [item("b")], h.now)).at).toEqual({ kind: "item", index: 0, part: { of: "topic" } });
    const [delivery] = await h.dequeue("n", [["a", 1]]);
    await h.settleAck(h.engine.ack("n", [delivery!.receipt], h.now));
    await h.enqueue("n", [item("b")]);
    expect(engineGauges(h).topics).toBe(1);
    h.check();
  });

  test("a pause of a new topic creates it, so it counts and is refused past the maximum", async () => {
    const h = new Harness({ limits: { topicsMax: 2 } });
    await h.enqueue("n", [item("a")]);
    await h.settle(h.engine.pause("n", "empty", null, h.now));
    const refused = failure(h.engine.pause("n", "other", null, h.now));
    expect(refused).toEqual(expect.objectContaining({ kind: "over_limit", at: { kind: "topic" } }));
    // Pausing a topic that exists is no new topic.
    await h.settle(h.engine.pause("n", "a", 1000, h.now));
    expect(failure(h.engine.enqueue("n", [item("b")], h.now)).at).toEqual({ kind: "item", index: 0, part: { of: "topic" } });
    await h.settle(h.engine.resume("n", "empty", h.now));
    await h.enqueue("n", [item("b")]);
    h.check();
  });
});

describe("namespaces maximum", () => {
  test("a new namespace past it is TOO_LARGE on `ns`, by enqueue or by pause", async () => {
    const h = new Harness({ limits: { namespacesMax: 2 } });
    await h.enqueue("n1", [item("a")]);
    await h.settle(h.engine.pause("n2", "t", null, h.now));
    const refused = failure(h.engine.enqueue("n3", [item("a")], h.now));
    expect(refused.kind).toBe("over_limit");
    expect(refused.at).toEqual({ kind: "namespace" });
    expect(refused.message).toContain("namespaces_max 2");
    expect(failure(h.engine.pause("n3", "t", null, h.now)).at).toEqual({ kind: "namespace" });
    expect(engineGauges(h).namespaces).toBe(2);
    await h.enqueue("n2", [item("b")]);
    h.check();
  });
});

describe("a restart over a lowered maximum", () => {
  test("loads and serves every stored item, and refuses new ones until under the maximum", async () => {
    const limits: Partial<Limits> = {};
    const h = new Harness({ limits });
    await h.enqueue("n", [item("a"), item("a"), item("b"), item("c"), item("d")]);
    await h.enqueue("m", [item("a")]);
    limits.liveItemsMax = 4;
    limits.topicsMax = 3;
    limits.namespacesMax = 1;
    await h.restart();
    h.check();
    expect(engineGauges(h)).toEqual(expect.objectContaining({ items: 6, topics: 5, namespaces: 2 }));
    expect(failure(h.engine.enqueue("n", [item("a")], h.now)).at).toEqual({ kind: "batch" });
    expect(failure(h.engine.enqueue("x", [item("a")], h.now)).at).toEqual({ kind: "namespace" });
    const delivered = await h.dequeue("n", [["a", 2], ["b", 1], ["c", 1], ["d", 1]]);
    expect(delivered.map((d) => d.topic)).toEqual(["a", "a", "b", "c", "d"]);
    // Two acks leave 4 items (at the maximum, not under it); one more leaves room for one.
    await h.settleAck(h.engine.ack("n", delivered.slice(0, 2).map((d) => d.receipt), h.now));
    expect(failure(h.engine.enqueue("n", [item("b")], h.now)).at).toEqual({ kind: "batch" });
    await h.settleAck(h.engine.ack("n", [delivered[2]!.receipt], h.now));
    // Topics a and b emptied and were dropped: c, d and m's a are left, at topics_max.
    expect(engineGauges(h).topics).toBe(3);
    // Room for an item now, but topic "e" would be a fourth.
    expect(failure(h.engine.enqueue("n", [item("e")], h.now)).at).toEqual({ kind: "item", index: 0, part: { of: "topic" } });
    await h.enqueue("n", [item("c")]);
    expect(engineGauges(h).items).toBe(4);
    h.check();
  });
});
