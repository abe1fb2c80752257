// Goal: the unmatchable-items report in `stats` (src/engine/matching/unmatchable.ts).
// Ready items count as unmatchable when workers asked their topic within the
// window and none of them may take them; checked at the window's edge (limit
// - 1, limit, limit + 1), with several kinds, items without requires, workers
// without capabilities, groups that empty, delayed and leased items (not
// counted), the per-topic bound on remembered kinds and the cap on listed
// signatures, Matcher kinds evicted between the ask and the report, and the
// canonical `requires` the report shows. Time is a ManualClock.

import { describe, expect, test } from "bun:test";
import { askersPerTopicMax, defaultLimits, unmatchableSignaturesListedMax } from "../../../src/limits.ts";
import { type Capabilities, parseCapabilities, parseRequires, type Requires } from "../../../src/engine/matching/index.ts";
import type { LiveItem } from "../../../src/engine/state/item.ts";
import { Topic } from "../../../src/engine/ready/topic.ts";
import { AskTracker, requiresToWire } from "../../../src/engine/matching/unmatchable.ts";
import { Harness, item } from "../support/harness.ts";

const windowMs = defaultLimits.unmatchableAskWindowMs;
const h100 = { gpu: "h100" };
const t4 = { gpu: "t4" };

type Report = { asked: boolean; askers: number; items: number; signatures: Array<{ requires: Record<string, unknown>; items: number }>; signaturesTruncated: boolean };

function report(h: Harness, ns: string, topic: string): Report {
  const stats = h.engine.stats(null, h.now) as any;
  return stats.namespaces[ns].topics[topic].unmatchable as Report;
}

async function ask(h: Harness, topic: string, capabilities: Record<string, unknown> | null, ns = "n"): Promise<number> {
  return (await h.dequeue(ns, [[topic, 1]], { capabilities })).length;
}

function caps(raw: Record<string, unknown>): Capabilities {
  const r = parseCapabilities(raw, defaultLimits);
  if (!r.ok || r.value === null) throw new Error("bad capabilities in test");
  return r.value;
}

function requires(raw: Record<string, unknown>): Requires {
  const r = parseRequires(raw, defaultLimits);
  if (!r.ok || r.value === null) throw new Error("bad requires in test");
  return r.value;
}

describe("unmatchable items in stats", () => {
  test("items a recent asker cannot take are reported with their signature; the namespace sums them", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { requires: h100 }), item("t", { requires: h100 }), item("t", { requires: h100 }), item("t")]);
    // Nobody asked yet: the topic says so and counts nothing.
    expect(report(h, "n", "t")).toEqual({ asked: false, askers: 0, items: 0, signatures: [], signaturesTruncated: false });
    expect(await ask(h, "t", t4)).toBe(1); // takes the item without requires
    expect(report(h, "n", "t")).toEqual({
      asked: true,
      askers: 1,
      items: 3,
      signatures: [{ requires: { gpu: "h100" }, items: 3 }],
      signaturesTruncated: false,
    });
    const stats = h.engine.stats(null, h.now) as any;
    expect(stats.namespaces.n.unmatchable).toBe(3);
    // A namespace-scoped view carries the same report.
    expect((h.engine.stats(["n"], h.now) as any).namespaces.n.topics.t.unmatchable.items).toBe(3);
    h.check();
  });

  test("an ask counts for exactly the window: limit - 1 and limit yes, limit + 1 no", async () => {
    for (const [elapsedMs, asked] of [
      [windowMs - 1, true],
      [windowMs, true],
      [windowMs + 1, false],
    ] as const) {
      const h = new Harness();
      await h.enqueue("n", [item("t", { requires: h100 })]);
      await ask(h, "t", t4);
      h.advance(elapsedMs);
      const r = report(h, "n", "t");
      expect(r.asked).toBe(asked);
      expect(r.items).toBe(asked ? 1 : 0);
    }
  });

  test("a later ask refreshes the window; a forgotten ask stays forgotten", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { requires: h100 })]);
    await ask(h, "t", t4);
    h.advance(windowMs - 1);
    await ask(h, "t", t4);
    h.advance(windowMs - 1);
    expect(report(h, "n", "t").items).toBe(1);
    h.advance(2);
    expect(report(h, "n", "t").asked).toBe(false);
    // Going back in time (a stats call with an older nowMs) does not revive it.
    expect((h.engine.stats(null, h.now - windowMs) as any).namespaces.n.topics.t.unmatchable.asked).toBe(false);
  });

  test("several kinds: a group is takeable when any recent asker may take it", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { requires: h100 }), item("t", { requires: t4 }), item("t", { requires: { gpu: "a100" } })]);
    await ask(h, "t", t4); // takes its t4 item
    await h.enqueue("n", [item("t", { requires: t4 })]);
    h.advance(1000);
    await ask(h, "t", { gpu: ["h100", "x"] }); // takes the h100 item
    await h.enqueue("n", [item("t", { requires: h100 })]);
    let r = report(h, "n", "t");
    expect(r.askers).toBe(2);
    expect(r.items).toBe(1);
    expect(r.signatures).toEqual([{ requires: { gpu: "a100" }, items: 1 }]);
    // The t4 worker's ask ages out first; the h100 worker's is still recent.
    // Both leases expired meanwhile, so both t4 items are ready again.
    h.advance(windowMs);
    r = report(h, "n", "t");
    expect(r.askers).toBe(1);
    expect(r.items).toBe(3);
    expect(r.signatures).toEqual([
      { requires: { gpu: "t4" }, items: 2 },
      { requires: { gpu: "a100" }, items: 1 },
    ]);
  });

  test("items without requires are takeable by anyone, even a worker without capabilities; requires are not", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t"), item("t"), item("t", { requires: { gpu: { exists: false } } }), item("t", { requires: { zone: { ne: "x" } } })]);
    expect(await ask(h, "t", null)).toBe(1);
    const r = report(h, "n", "t");
    // The contract: no capabilities takes only items without requires, even ones an absent feature would meet.
    expect(r.items).toBe(2);
    expect(r.signatures.map((s) => s.requires).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { gpu: { exists: false } },
      { zone: { ne: "x" } },
    ]);
    // `{}` capabilities are the same as none.
    const h2 = new Harness();
    await h2.enqueue("n", [item("t", { requires: h100 })]);
    await ask(h2, "t", {});
    expect(report(h2, "n", "t").items).toBe(1);
  });

  test("only ready items count: delayed and leased ones do not, and a group that empties leaves the report", async () => {
    const h = new Harness();
    const ids = await h.enqueue("n", [item("t", { requires: h100 }), item("t", { requires: h100, delayMs: 60_000 }), item("t")]);
    await ask(h, "t", t4);
    expect(report(h, "n", "t").items).toBe(1);
    // An h100 worker leases the ready one: nothing is stuck, and nothing is ready for it now.
    expect(await ask(h, "t", h100)).toBe(1);
    expect(report(h, "n", "t")).toMatchObject({ askers: 2, items: 0, signatures: [] });
    // Its lease runs out and the h100 worker's ask ages out with it; the delayed item is due too.
    h.advance(windowMs + 1);
    await ask(h, "t", t4);
    expect(report(h, "n", "t")).toMatchObject({ askers: 1, items: 2, signatures: [{ requires: { gpu: "h100" }, items: 2 }] });
    // Cancelling them empties the group; the topic's report follows.
    await h.settle(h.engine.cancel("n", [ids[0] as string, ids[1] as string], h.now));
    expect(report(h, "n", "t")).toMatchObject({ asked: true, items: 0, signatures: [] });
    h.check();
  });

  test("signatures listed per topic: most items first, capped, with a truncated flag", async () => {
    for (const distinct of [unmatchableSignaturesListedMax - 1, unmatchableSignaturesListedMax, unmatchableSignaturesListedMax + 1]) {
      const h = new Harness();
      const items = [];
      for (let i = 0; i < distinct; i++) {
        // Signature i has i + 1 items, so the most numerous come first.
        for (let k = 0; k <= i; k++) items.push(item("t", { requires: { pool: i } }));
      }
      await h.enqueue("n", items);
      await ask(h, "t", t4);
      const r = report(h, "n", "t");
      expect(r.items).toBe(items.length);
      expect(r.signatures.length).toBe(Math.min(distinct, unmatchableSignaturesListedMax));
      expect(r.signaturesTruncated).toBe(distinct > unmatchableSignaturesListedMax);
      expect(r.signatures[0]).toEqual({ requires: { pool: distinct - 1 }, items: distinct });
      const counts = r.signatures.map((s) => s.items);
      expect(counts).toEqual([...counts].sort((a, b) => b - a));
    }
  });

  test("a worker kind the Matcher evicted since it asked is still judged by its capabilities", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("x", { requires: h100 }), item("x", { requires: t4 }), item("x", { requires: t4 }), item("y")]);
    await ask(h, "x", t4);
    // 256 other kinds (the Matcher's default bound) push the t4 kind out of its cache.
    for (let i = 0; i < 256; i++) await h.dequeue("n", [["y", 1]], { capabilities: { worker: i }, leaseMs: 1 });
    expect((h.engine.stats(null, h.now) as any).engine.workerKinds).toBe(256);
    const r = report(h, "n", "x");
    expect(r.askers).toBe(1);
    expect(r.signatures).toEqual([{ requires: { gpu: "h100" }, items: 1 }]);
    // The t4 worker comes back under a new kind id: one more remembered kind, still one distinct asker.
    expect(await ask(h, "x", t4)).toBe(1);
    expect(report(h, "n", "x").askers).toBe(1);
  });

  test("a topic that ends takes its askers with it", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { requires: h100 })]);
    await ask(h, "t", t4);
    await h.settle(h.engine.cancel("n", [id as string], h.now));
    expect((h.engine.stats(null, h.now) as any).namespaces.n.topics.t).toBeUndefined();
    await h.enqueue("n", [item("t", { requires: h100 })]);
    // A new topic of the same name: nobody has asked it yet.
    expect(report(h, "n", "t").asked).toBe(false);
  });
});

describe("AskTracker", () => {
  test(`remembers at most ${askersPerTopicMax} kinds per topic, forgetting the one that asked least recently`, () => {
    const tracker = new AskTracker();
    const topic = new Topic<LiveItem>("n", "t");
    const startMs = 1_000_000;
    const kinds = Array.from({ length: askersPerTopicMax + 1 }, (_, i) => caps({ worker: i }));
    for (let i = 0; i < askersPerTopicMax - 1; i++) tracker.noteAsk(topic, i, kinds[i] as Capabilities, startMs + i);
    expect(tracker.rememberedKinds(topic)).toBe(askersPerTopicMax - 1);
    tracker.noteAsk(topic, askersPerTopicMax - 1, kinds[askersPerTopicMax - 1] as Capabilities, startMs + askersPerTopicMax);
    expect(tracker.rememberedKinds(topic)).toBe(askersPerTopicMax);
    // Kind 0 asks again, so kind 1 is now the least recent.
    tracker.noteAsk(topic, 0, kinds[0] as Capabilities, startMs + 1000);
    expect(tracker.rememberedKinds(topic)).toBe(askersPerTopicMax);
    tracker.noteAsk(topic, askersPerTopicMax, kinds[askersPerTopicMax] as Capabilities, startMs + 1001);
    expect(tracker.rememberedKinds(topic)).toBe(askersPerTopicMax);
    const recent = tracker.recentAskers(topic, startMs + 1001, windowMs).map((c) => c?.key);
    expect(recent).toContain(kinds[0]?.key);
    expect(recent).toContain(kinds[askersPerTopicMax]?.key);
    expect(recent).not.toContain(kinds[1]?.key);
  });

  test("a repeat ask updates the kind's one entry, and an older nowMs does not move the ask back", () => {
    const tracker = new AskTracker();
    const topic = new Topic<LiveItem>("n", "t");
    const c = caps(t4);
    tracker.noteAsk(topic, 7, c, 5000);
    tracker.noteAsk(topic, 7, c, 4000);
    expect(tracker.rememberedKinds(topic)).toBe(1);
    expect(tracker.recentAskers(topic, 5000 + windowMs, windowMs)).toEqual([c]);
    // Forgetting the last ask forgets the topic.
    expect(tracker.recentAskers(topic, 5001 + windowMs, windowMs)).toEqual([]);
    expect(tracker.rememberedKinds(topic)).toBe(0);
  });

  test("equal capability sets under two kind ids count once", () => {
    const tracker = new AskTracker();
    const topic = new Topic<LiveItem>("n", "t");
    tracker.noteAsk(topic, 1, caps(t4), 0);
    tracker.noteAsk(topic, 257, caps(t4), 1);
    tracker.noteAsk(topic, -1, null, 2);
    expect(tracker.rememberedKinds(topic)).toBe(3);
    expect(tracker.recentAskers(topic, 3, windowMs).length).toBe(2);
  });
});

describe("requiresToWire", () => {
  test("shows the canonical form: one value as a scalar, otherwise operator maps; feature names unchanged", () => {
    expect(requiresToWire(requires({ gpuModel: "h100", cores: 8.0 }))).toEqual({ cores: 8, gpuModel: "h100" });
    expect(requiresToWire(requires({ zone: { in: ["b", "a", "b"] } }))).toEqual({ zone: { in: ["a", "b"] } });
    expect(requiresToWire(requires({ zone: { in: ["a"] } }))).toEqual({ zone: "a" });
    expect(requiresToWire(requires({ tags: { all: ["y", "x"] } }))).toEqual({ tags: { all: ["x", "y"] } });
    expect(requiresToWire(requires({ mem: { gte: 8, gt: 8, lt: 64 } }))).toEqual({ mem: { gt: 8, lt: 64 } });
    expect(requiresToWire(requires({ mem: { lte: 4 } }))).toEqual({ mem: { lte: 4 } });
    expect(requiresToWire(requires({ zone: { ne: "x", exists: true } }))).toEqual({ zone: { ne: "x", exists: true } });
    expect(requiresToWire(requires({ spot: { exists: false } }))).toEqual({ spot: { exists: false } });
    expect(requiresToWire(requires({ v: { in: [1, 2], gte: 1 } }))).toEqual({ v: { in: [1, 2], gte: 1 } });
    // A rendered requires parses back to the same signature.
    const original = requires({ a: { in: [3, 1] }, b: { gte: 2, lt: 9, ne: 5 }, c: true });
    expect(requires(requiresToWire(original)).key).toBe(original.key);
  });
});
