// Goal: the ready index (per topic a TopsHeap over the (signature, shard)
// heaps, src/engine/ready/topic.ts) delivers exactly what a brute-force reference
// says: for every dequeue, the best items the worker may take, in delivery
// order (priority, deliver_at_ms, enqueue order); and never an item twice
// while it is leased. Seeded random runs mix enqueue, dequeue by several
// worker kinds, nack, ack, cancel, TTL and lease expiry, and check the
// engine's invariants and every item's state after each step. Shard outages
// are covered below.

import { describe, expect, test } from "bun:test";
import { dequeued, Harness, item, take } from "../support/harness.ts";

type Requires = Record<string, unknown> | null;
type Caps = Record<string, unknown> | null;

/** Requirement forms: none, a scalar, an `in`, a range. */
const requiresForms: Requires[] = [null, { gpu: "a" }, { gpu: { in: ["a", "b"] } }, { mem: { gte: 32 } }, { gpu: "c" }];
/** Worker kinds: none, and three capability sets (none of them has gpu "c": those items wait). */
const kinds: Caps[] = [null, { gpu: "a", mem: 16 }, { gpu: ["a", "b"], mem: 64 }, { mem: 128 }];

function eligible(requires: Requires, caps: Caps): boolean {
  if (requires === null) return true;
  if (caps === null) return false;
  const gpus = caps.gpu === undefined ? [] : Array.isArray(caps.gpu) ? caps.gpu : [caps.gpu];
  if ("gpu" in requires) {
    const wanted = requires.gpu;
    if (typeof wanted === "string") return gpus.includes(wanted);
    return (wanted as { in: string[] }).in.some((g) => gpus.includes(g));
  }
  const mem = caps.mem;
  return typeof mem === "number" && mem >= (requires.mem as { gte: number }).gte;
}

interface ModelItem {
  id: string;
  shard: number;
  key: number;
  topic: string;
  priority: number;
  deliverAtMs: number;
  requires: Requires;
  attempt: number;
  ttlAtMs: number | null;
  state: "ready" | "leased";
  receipt: string | null;
  leaseEndsAtMs: number;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const leaseMs = 1000;
const maxAttempts = 3;

async function run(seed: number, steps: number): Promise<void> {
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const h = new Harness({ shards: 4 });
  const live = new Map<string, ModelItem>();
  const topics = ["x", "y"];

  const expected = (topic: string, caps: Caps, count: number): string[] =>
    [...live.values()]
      .filter((m) => m.state === "ready" && m.topic === topic && eligible(m.requires, caps))
      .sort((a, b) => a.priority - b.priority || a.deliverAtMs - b.deliverAtMs || a.key - b.key)
      .slice(0, count)
      .map((m) => m.id);

  for (let step = 0; step < steps; step++) {
    const roll = random();
    if (roll < 0.3) {
      const count = 1 + Math.floor(random() * 4);
      const inputs = Array.from({ length: count }, () => {
        const ttlMs = random() < 0.1 ? 1 + Math.floor(random() * 3000) : null;
        return item(pick(topics), { priority: Math.floor(random() * 3), requires: pick(requiresForms), ttlMs, leaseMs, maxAttempts });
      });
      const ids = await h.enqueue("n", inputs);
      ids.forEach((id, i) => {
        const input = inputs[i]!;
        const [shard, key] = id.split(":").map(Number) as [number, number];
        live.set(id, {
          id, shard, key, topic: input.topic, priority: input.priority, deliverAtMs: h.now, requires: input.requires,
          attempt: 0, ttlAtMs: input.ttlMs === null ? null : h.now + input.ttlMs, state: "ready", receipt: null, leaseEndsAtMs: 0,
        });
      });
    } else if (roll < 0.6) {
      const topic = pick(topics);
      const caps = pick(kinds);
      const count = 1 + Math.floor(random() * 3);
      const want = expected(topic, caps, count);
      const outcome = dequeued(h.engine.dequeue("n", take([[topic, count]], { capabilities: caps }), h.now));
      expect(outcome.kind).toBe("done");
      if (outcome.kind !== "done") return;
      const got = outcome.deliveries;
      expect(got.map((d) => d.id)).toEqual(want);
      for (const d of got) {
        const m = live.get(d.id)!;
        expect(m.state).toBe("ready");
        m.state = "leased";
        m.attempt++;
        m.receipt = d.receipt;
        m.leaseEndsAtMs = h.now + leaseMs;
        expect(d.attempt).toBe(m.attempt);
      }
      await outcome.durable;
    } else if (roll < 0.7) {
      const leased = [...live.values()].filter((m) => m.state === "leased");
      if (leased.length === 0) continue;
      const m = pick(leased);
      const r = await h.settle(h.engine.nack("n", [{ receipt: m.receipt as string, delayMs: null, metadata: null }], h.now));
      expect(r.nacked).toBe(1);
      if (m.ttlAtMs !== null && m.ttlAtMs <= h.now) live.delete(m.id);
      else if (m.attempt >= maxAttempts) live.delete(m.id);
      else Object.assign(m, { state: "ready", receipt: null, deliverAtMs: h.now });
    } else if (roll < 0.78) {
      const leased = [...live.values()].filter((m) => m.state === "leased");
      if (leased.length === 0) continue;
      const m = pick(leased);
      expect((await h.settleAck(h.engine.ack("n", [m.receipt as string], h.now))).acked).toBe(1);
      live.delete(m.id);
    } else if (roll < 0.86) {
      if (live.size === 0) continue;
      const m = pick([...live.values()]);
      expect((await h.settle(h.engine.cancel("n", [m.id], h.now))).cancelled).toBe(1);
      live.delete(m.id);
    } else if (roll < 0.95) {
      // Time passes: TTLs end ready items (leased ones keep their lease), leases expire.
      h.advance(1 + Math.floor(random() * 1200));
      for (const m of [...live.values()]) {
        const ttlPassed = m.ttlAtMs !== null && m.ttlAtMs <= h.now;
        if (m.state === "ready" && ttlPassed) live.delete(m.id);
        else if (m.state === "leased" && m.leaseEndsAtMs <= h.now) {
          if (ttlPassed || m.attempt >= maxAttempts) live.delete(m.id);
          else Object.assign(m, { state: "ready", receipt: null });
        }
      }
      // An item whose TTL passed while leased and whose lease then ended is gone; one still leased stays.
      for (const m of [...live.values()]) if (m.state === "ready" && m.ttlAtMs !== null && m.ttlAtMs <= h.now) live.delete(m.id);
    }
    h.check();
    for (const m of live.values()) expect(h.state("n", m.id)).toBe(m.state);
  }
  await h.writer.drain();
}

describe("ready index against a reference", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    test(`seed ${seed}: every dequeue takes the best eligible items, each once`, async () => {
      await run(seed, 400);
    });
  }
});

describe("ready index edges", () => {
  test("an enqueue better than the current best is delivered first, across shards and groups", async () => {
    const h = new Harness({ shards: 4 });
    for (let i = 0; i < 8; i++) await h.enqueue("n", [item("t", { priority: 5, requires: i % 2 === 0 ? null : { gpu: "a" } })]);
    const [better] = await h.enqueue("n", [item("t", { priority: 1, requires: { gpu: "a" } })]);
    const [first] = await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "a" } });
    expect(first!.id).toBe(better!);
    // A worker without capabilities never sees the gpu item, and takes the rest in enqueue order.
    const plain = await h.dequeue("n", [["t", 10]]);
    expect(plain.length).toBe(4);
    h.check();
  });

  test("a kind that may take nothing in a topic gets nothing, and the topic still serves others", async () => {
    const h = new Harness({ shards: 2 });
    await h.enqueue("n", [item("t", { requires: { gpu: "c" } }), item("t", { requires: { gpu: "c" } })]);
    expect(await h.dequeue("n", [["t", 5]], { capabilities: { gpu: "a" } })).toEqual([]);
    expect(await h.dequeue("n", [["t", 5]])).toEqual([]);
    expect((await h.dequeue("n", [["t", 5]], { capabilities: { gpu: "c" } })).length).toBe(2);
    h.check();
  });

  test("a shard that takes no writes is skipped: the best item of the healthy shards is delivered, in order", async () => {
    const h = new Harness({ shards: 2, shardGate: true });
    // Enqueues go round-robin over the shards: one batch per shard.
    const [a] = await h.enqueue("n", [item("t", { priority: 1, requires: { gpu: "a" } })]);
    const [b, c] = await h.enqueue("n", [item("t", { priority: 2, requires: { gpu: "a" } }), item("t", { priority: 3 })]);
    const shardA = Number((a as string).split(":")[0]);
    expect(Number((b as string).split(":")[0])).not.toBe(shardA);
    // Shard A stops taking writes (in a cluster: it is owned elsewhere now).
    h.gate!.closed.add(shardA);
    const during = await h.dequeue("n", [["t", 5]], { capabilities: { gpu: "a" } });
    // Shard A's priority-1 item is the best but cannot be leased durably now.
    expect(during.map((d) => d.id)).toEqual([b as string, c as string]);
    h.check();
  });

  test("many better entries the worker may not take: the walk gives up and the slot scan finds the best eligible item", async () => {
    const h = new Harness({ shards: 4 });
    // 8 signatures x 4 shards of priority-0 items nobody here may take: 32 entries better than any eligible one.
    for (let round = 0; round < 4; round++) {
      await h.enqueue("n", Array.from({ length: 8 }, (_, i) => item("t", { priority: 0, requires: { gpu: `c${i}` } })));
    }
    const [worse, best] = await h.enqueue("n", [item("t", { priority: 3, requires: { gpu: "a" } }), item("t", { priority: 2, requires: { gpu: "a" } })]);
    const [later] = await h.enqueue("n", [item("t", { priority: 2 })]);
    const got = await h.dequeue("n", [["t", 3]], { capabilities: { gpu: "a" } });
    expect(got.map((d) => d.id)).toEqual([best as string, later as string, worse as string]);
    // The scan's slot list follows new shard heaps and groups.
    const [fresh] = await h.enqueue("n", [item("t", { priority: 1, requires: { gpu: { in: ["a", "z"] } } })]);
    expect((await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "a" } }))[0]!.id).toBe(fresh as string);
    h.check();
  });

  test("groups and tops-heap entries go away with their last item, and come back", async () => {
    const h = new Harness({ shards: 3 });
    const ids = await h.enqueue("n", [item("t", { requires: { gpu: "a" } }), item("t")]);
    await h.settle(h.engine.cancel("n", ids, h.now));
    h.check();
    await h.enqueue("n", [item("t", { requires: { gpu: "a" } })]);
    expect((await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "a" } })).length).toBe(1);
    h.check();
  });
});
