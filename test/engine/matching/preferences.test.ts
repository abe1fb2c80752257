// Goal: the contract's "Preferences": fit orders items of one priority (and
// group), prefer_wait_ms holds an item for full-fit workers from when it last
// became ready, explain names the hold, and prefers, prefer_wait_ms and trace
// survive a restart. A seeded model on the injected clock checks every pick
// against a reference written from the contract.

import { describe, expect, test } from "bun:test";
import type { Delivery, EnqueueItemInput, ItemState } from "../../../src/engine/api.ts";
import { Harness, item, unwrap } from "../support/harness.ts";

const repoA = { repo: "a" };
const repoB = { repo: "b" };

async function takeOne(h: Harness, caps: Record<string, unknown> | null): Promise<Delivery | null> {
  const got = await h.dequeue("n", [["t", 1]], { capabilities: caps });
  return got[0] ?? null;
}

function stateOf(h: Harness, id: string): ItemState {
  return unwrap(h.engine.get("n", [id], h.now)).items[0] as ItemState;
}

describe("fit orders items of one priority", () => {
  test("a worker takes the item it fits best first, then the usual order; priority still comes first", async () => {
    const h = new Harness({ shards: 1 });
    const [plain, forB, forA, urgent] = await h.enqueue("n", [
      item("t"),
      item("t", { prefers: repoB }),
      item("t", { prefers: { repo: { in: ["a"], weight: 5 } } }),
      item("t", { priority: -1, prefers: repoB }),
    ]);
    expect((await takeOne(h, repoA))?.id).toBe(urgent as string);
    expect((await takeOne(h, repoA))?.id).toBe(forA as string);
    // Fit 0 for both: enqueue order.
    expect((await takeOne(h, repoA))?.id).toBe(plain as string);
    expect((await takeOne(h, repoA))?.id).toBe(forB as string);
    h.check();
  });

  test("weights decide between partial fits; a worker without capabilities takes in the usual order", async () => {
    const h = new Harness({ shards: 1 });
    const [light, heavy] = await h.enqueue("n", [item("t", { prefers: { os: "linux", zone: "x" } }), item("t", { prefers: { os: "linux", zone: { in: ["y"], weight: 9 } } })]);
    expect((await takeOne(h, { os: "linux", zone: "y" }))?.id).toBe(heavy as string);
    expect((await takeOne(h, null))?.id).toBe(light as string);
    h.check();
  });

  test("within a group too; the rotation between groups is unchanged", async () => {
    const h = new Harness({ shards: 1 });
    const [g1plain, g1a, g2plain] = await h.enqueue("n", [item("t", { group: "g1" }), item("t", { group: "g1", prefers: repoA }), item("t", { group: "g2" })]);
    expect((await takeOne(h, repoA))?.id).toBe(g1a as string);
    expect((await takeOne(h, repoA))?.id).toBe(g2plain as string);
    expect((await takeOne(h, repoA))?.id).toBe(g1plain as string);
    h.check();
  });
});

describe("prefer_wait_ms", () => {
  test("holds the item for full-fit workers, then lets any capable worker take it", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t", { requires: { os: "linux" }, prefers: repoA, preferWaitMs: 50 })]);
    expect(await takeOne(h, { os: "linux", repo: "b" })).toBeNull();
    const reasons = unwrap(h.engine.explain("n", [id as string], h.now)).items[0]?.reasons;
    expect(reasons).toEqual([{ reason: "held_for_preferred", untilMs: h.now + 50 }]);
    h.advance(49);
    expect(await takeOne(h, { os: "linux", repo: "b" })).toBeNull();
    h.advance(1);
    expect((await takeOne(h, { os: "linux", repo: "b" }))?.id).toBe(id as string);
    h.check();
  });

  test("a full-fit worker takes a held item at once; the wait starts again when the item is ready again", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t", { prefers: repoA, preferWaitMs: 100 })]);
    const first = await takeOne(h, repoA);
    expect(first?.id).toBe(id as string);
    h.advance(500);
    unwrap(h.engine.nack("n", [{ receipt: (first as Delivery).receipt, delayMs: 0, metadata: null }], h.now));
    expect(await takeOne(h, repoB)).toBeNull();
    h.advance(100);
    expect((await takeOne(h, repoB))?.id).toBe(id as string);
    h.check();
  });

  test("fields survive a restart; the wait counts again from the load", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t", { prefers: { repo: { in: ["a", "c"], weight: 7 } }, preferWaitMs: 30, trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" })]);
    await h.restart();
    const state = stateOf(h, id as string);
    expect(state.prefers).toEqual({ repo: { in: ["a", "c"], weight: 7 } });
    expect(state.preferWaitMs).toBe(30);
    expect(state.trace).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(await takeOne(h, repoB)).toBeNull();
    h.advance(30);
    const delivery = await takeOne(h, repoB);
    expect(delivery?.trace).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    h.check();
  });

  test("a held item with prefers and no requires is not reported unmatchable (stats reads it)", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t", { prefers: { zone: "eu" }, preferWaitMs: 3_600_000 })]);
    expect(await takeOne(h, { zone: "us" })).toBeNull();
    const stats = h.engine.stats(null, h.now) as unknown as { namespaces: Record<string, { topics: Record<string, { unmatchable?: { items: number } }> }> };
    expect(stats.namespaces.n?.topics.t?.unmatchable?.items ?? 0).toBe(0);
  });

  test("bad prefers are refused where they lie", () => {
    const h = new Harness();
    const bad = (prefers: Record<string, unknown>) => {
      const result = h.engine.enqueue("n", [item("t", { prefers })], h.now);
      return result.ok ? null : result.failure;
    };
    expect(bad({ repo: { in: ["a"], weight: 0 } })?.kind).toBe("invalid_value");
    expect(bad({ repo: { in: ["a"], weight: 1001 } })?.kind).toBe("invalid_value");
    expect(bad({ repo: { weight: 3 } })?.kind).toBe("invalid_value");
    expect(bad({ repo: { nope: 1 } })?.kind).toBe("invalid_value");
  });
});

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ModelItem {
  id: string;
  seq: number;
  priority: number;
  deliverAtMs: number;
  readyAtMs: number;
  requires: Record<string, string> | null;
  prefers: Record<string, { in: string[]; weight: number }> | null;
  waitMs: number;
  group: string | null;
  leased: string | null;
}

const features = ["repo", "zone", "pool"] as const;
const values = ["a", "b", "c"] as const;

/** The reference: fit and full fit of a worker for an item, from the contract's words. */
function fitOf(m: ModelItem, caps: Record<string, string>): { fit: number; full: boolean } {
  if (m.prefers === null) return { fit: 0, full: true };
  let fit = 0;
  let full = true;
  for (const [feature, c] of Object.entries(m.prefers)) {
    if (c.in.includes(caps[feature] as string)) fit += c.weight;
    else full = false;
  }
  return { fit, full };
}

function mayTake(m: ModelItem, caps: Record<string, string>, nowMs: number): boolean {
  if (m.leased !== null || m.deliverAtMs > nowMs) return false;
  if (m.requires !== null) for (const [feature, value] of Object.entries(m.requires)) if (caps[feature] !== value) return false;
  const held = m.prefers !== null && m.waitMs > 0 && nowMs < m.readyAtMs + m.waitMs;
  return !held || fitOf(m, caps).full;
}

function expectedPick(items: Iterable<ModelItem>, caps: Record<string, string>, nowMs: number): ModelItem | null {
  let best: ModelItem | null = null;
  let bestFit = 0;
  for (const m of items) {
    if (!mayTake(m, caps, nowMs)) continue;
    const fit = fitOf(m, caps).fit;
    const better =
      best === null ||
      m.priority < best.priority ||
      (m.priority === best.priority && (fit > bestFit || (fit === bestFit && (m.deliverAtMs < best.deliverAtMs || (m.deliverAtMs === best.deliverAtMs && m.seq < best.seq)))));
    if (better) {
      best = m;
      bestFit = fit;
    }
  }
  return best;
}

/**
 * With groups the rotation (virtual time, fair-model.test.ts checks it)
 * chooses the group: here the pick must have the best priority the worker
 * may take, and be its group's best by fit, then delivery order.
 */
function checkGroupedPick(items: ModelItem[], caps: Record<string, string>, nowMs: number, got: Delivery | null, context: string): void {
  const expected = expectedPick(items, caps, nowMs);
  expect(got === null, context).toBe(expected === null);
  if (got === null || expected === null) return;
  const gotItem = items.find((m) => m.id === got.id) as ModelItem;
  expect(gotItem.priority, context).toBe(expected.priority);
  const inGroup = expectedPick(items.filter((m) => m.group === gotItem.group && m.priority === gotItem.priority), caps, nowMs);
  expect(got.id, context).toBe(inGroup?.id as string);
}

async function runModel(seed: number, steps: number, grouped = false): Promise<void> {
  const rnd = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const h = new Harness({ shards: 1 });
  const live = new Map<string, ModelItem>();
  let seq = 0;
  for (let step = 0; step < steps; step++) {
    const roll = rnd();
    const context = `seed ${seed} step ${step}`;
    if (roll < 0.35) {
      const prefers: Record<string, { in: string[]; weight: number }> = {};
      for (const feature of features) if (rnd() < 0.4) prefers[feature] = { in: [pick(values)], weight: 1 + Math.floor(rnd() * 5) };
      const hasPrefers = Object.keys(prefers).length > 0;
      const requires = rnd() < 0.2 ? { pool: pick(values) } : null;
      const waitMs = hasPrefers && rnd() < 0.6 ? pick([10, 40, 100]) : 0;
      const priority = Math.floor(rnd() * 3);
      const group = grouped ? pick([null, "g1", "g2", "g3"]) : null;
      const input: EnqueueItemInput = item("t", { priority, requires, prefers: hasPrefers ? prefers : null, preferWaitMs: waitMs, group });
      const [id] = await h.enqueue("n", [input]);
      live.set(id as string, { id: id as string, seq: seq++, priority, deliverAtMs: h.now, readyAtMs: h.now, requires, prefers: hasPrefers ? prefers : null, waitMs, group, leased: null });
    } else if (roll < 0.7) {
      const caps: Record<string, string> = {};
      for (const feature of features) if (rnd() < 0.8) caps[feature] = pick(values);
      if (grouped) {
        const got = await takeOne(h, caps);
        checkGroupedPick([...live.values()], caps, h.now, got, context);
        if (got !== null) (live.get(got.id) as ModelItem).leased = got.receipt;
        h.check();
        continue;
      }
      const expected = expectedPick(live.values(), caps, h.now);
      const got = await takeOne(h, caps);
      if ((got?.id ?? null) !== (expected?.id ?? null) && process.env.ORQ_PREFER_DEBUG !== undefined) {
        console.log(JSON.stringify({ now: h.now, caps, expected, got: got === null ? null : live.get(got.id) }, null, 1));
      }
      expect(got?.id ?? null, context).toBe(expected?.id ?? null);
      if (got !== null) (live.get(got.id) as ModelItem).leased = got.receipt;
    } else if (roll < 0.8) {
      const leased = [...live.values()].filter((m) => m.leased !== null);
      if (leased.length === 0) continue;
      const m = pick(leased);
      await h.settleAck(h.engine.ack("n", [m.leased as string], h.now));
      live.delete(m.id);
    } else if (roll < 0.88) {
      const leased = [...live.values()].filter((m) => m.leased !== null);
      if (leased.length === 0) continue;
      const m = pick(leased);
      const delayMs = pick([0, 0, 20]);
      await h.settle(h.engine.nack("n", [{ receipt: m.leased as string, delayMs, metadata: null }], h.now));
      m.leased = null;
      m.deliverAtMs = h.now + delayMs;
      m.readyAtMs = h.now + delayMs;
    } else if (roll < 0.99) {
      h.advance(pick([1, 5, 20, 50]));
    } else {
      await h.restart();
      // Leases end with the restart's recovery only at their expiry; the model keeps them. Ready items wait again from now.
      for (const m of live.values()) if (m.leased === null && m.deliverAtMs <= h.now) m.readyAtMs = h.now;
    }
    h.check();
  }
}

describe("preferences model", () => {
  const seeds = process.env.ORQ_PREFER_SEED === undefined ? [1, 2, 3, 4, 5] : [Number(process.env.ORQ_PREFER_SEED)];
  for (const seed of seeds) {
    test(`seed ${seed}: every pick matches the reference, across holds, releases, nacks and restarts`, async () => {
      await runModel(seed, 1500);
    });
    test(`seed ${seed}, with groups: the best priority, and within the chosen group the best fit`, async () => {
      await runModel(seed, 1500, true);
    });
  }
});
