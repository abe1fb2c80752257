// Goal: topics, dead, redrive and stats over TCP against a real `orq serve`,
// checked against the contract: per-topic counts in every state, byte order of
// names (not UTF-16 order), prefix, limit/next pagination (and a limit above
// the maximum lowered, 0 refused), a topic vanishing once it holds no items,
// dead letters made by nacks at max_attempts and by lease expiry, `dead`'s
// item states and limit, redrive of some ids and of all (attempts reset), and
// stats' counters, gauges, snake_case fields and user-chosen names unchanged.

import { describe, expect, test } from "bun:test";
import { startE2eSession, type Delivery } from "../support/e2e-session.ts";
import { RawConnection } from "../support/raw-connection.ts";

const session = startE2eSession(["--shards", "4"]);
const { ok, enqueue, dequeue } = session;

type Counts = { topic: string; ready: number; delayed: number; waiting: number; leased: number; dead: number; paused: boolean; paused_until_ms?: number };

async function topicsOf(ns: string, query: Record<string, unknown> = {}): Promise<{ topics: Counts[]; next?: string }> {
  const reply = await ok({ op: "topics", ns, ...query });
  return reply as unknown as { topics: Counts[]; next?: string };
}

/** Nack every delivery of `topic` until nothing is ready (each item dies at its max_attempts). */
async function nackUntilDead(ns: string, topic: string): Promise<number> {
  let nacks = 0;
  for (;;) {
    const got = await dequeue(ns, [{ topic, count: 100 }]);
    if (got.length === 0) return nacks;
    await ok({ op: "nack", ns, items: got.map((d) => ({ receipt: d.receipt })) });
    nacks += got.length;
  }
}

describe("topics", () => {
  test("counts every state per topic, following each change", async () => {
    const ns = "tp-counts";
    expect((await topicsOf(ns)).topics).toEqual([]);
    const [first] = await enqueue(ns, [{ topic: "t" }, { topic: "t" }, { topic: "t", delay_ms: 60_000 }, { topic: "t", max_attempts: 1 }]);
    await enqueue(ns, [{ topic: "t", after: [first!] }]);
    expect((await topicsOf(ns)).topics).toEqual([{ topic: "t", ready: 3, delayed: 1, waiting: 1, leased: 0, dead: 0, paused: false }]);
    // Lease the three ready ones, then nack the max_attempts 1 item into a dead letter.
    const leased = await dequeue(ns, [{ topic: "t", count: 5 }]);
    expect(leased.length).toBe(3);
    expect(leased[0]!.id).toBe(first!);
    await ok({ op: "nack", ns, items: [{ receipt: leased[2]!.receipt }] });
    expect((await topicsOf(ns)).topics).toEqual([{ topic: "t", ready: 0, delayed: 1, waiting: 1, leased: 2, dead: 1, paused: false }]);
    // Acking the dependency makes the waiting item ready.
    await ok({ op: "ack", ns, receipts: leased.slice(0, 2).map((d) => d.receipt) });
    expect((await topicsOf(ns)).topics).toEqual([{ topic: "t", ready: 1, delayed: 1, waiting: 0, leased: 0, dead: 1, paused: false }]);
    const [dead] = (await ok({ op: "dead", ns, topic: "t" })).items as Array<{ id: string }>;
    await ok({ op: "cancel", ns, ids: [dead!.id] });
    expect((await topicsOf(ns)).topics).toEqual([{ topic: "t", ready: 1, delayed: 1, waiting: 0, leased: 0, dead: 0, paused: false }]);
  });

  test("the last item leaving makes the topic vanish (acked, cancelled)", async () => {
    const ns = "tp-vanish";
    const [a, b] = await enqueue(ns, [{ topic: "x" }, { topic: "y", delay_ms: 60_000 }]);
    expect((await topicsOf(ns)).topics.map((t) => t.topic)).toEqual(["x", "y"]);
    const [d] = await dequeue(ns, [{ topic: "x" }]);
    expect(d!.id).toBe(a!);
    await ok({ op: "ack", ns, receipts: [d!.receipt] });
    expect((await topicsOf(ns)).topics.map((t) => t.topic)).toEqual(["y"]);
    await ok({ op: "cancel", ns, ids: [b!] });
    expect((await topicsOf(ns)).topics).toEqual([]);
  });

  test("byte order of names, prefix, and limit/next pagination visit every topic once", async () => {
    const ns = "tp-order";
    // UTF-8 byte order differs from UTF-16 code-unit order for U+FF5E vs U+1F600 (a surrogate pair).
    const names = ["b", "a", "a/2", "a/10", "B", "a/1", "\u{1F600}", "\uFF5E", "é", "a/"];
    await enqueue(ns, names.map((topic) => ({ topic })));
    const byteOrder = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(byteOrder.indexOf("\uFF5E")).toBeLessThan(byteOrder.indexOf("\u{1F600}"));
    const all = await topicsOf(ns);
    expect(all.topics.map((t) => t.topic)).toEqual(byteOrder);
    expect(all.next).toBeUndefined();
    expect((await topicsOf(ns, { prefix: "a/" })).topics.map((t) => t.topic)).toEqual(["a/", "a/1", "a/10", "a/2"]);
    expect((await topicsOf(ns, { prefix: "zz" })).topics).toEqual([]);
    // Pages of 3: each page continues after the last name of the previous one.
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const reply = await topicsOf(ns, { limit: 3, after });
      seen.push(...reply.topics.map((t) => t.topic));
      expect(reply.topics.length).toBeLessThanOrEqual(3);
      if (reply.next === undefined) break;
      after = reply.next;
    }
    expect(seen).toEqual(byteOrder);
    // Paging within a prefix.
    const first = await topicsOf(ns, { prefix: "a/", limit: 2 });
    expect(first.topics.map((t) => t.topic)).toEqual(["a/", "a/1"]);
    const second = await topicsOf(ns, { prefix: "a/", limit: 2, after: first.next });
    expect(second.topics.map((t) => t.topic)).toEqual(["a/10", "a/2"]);
    // A limit above the page maximum is lowered (not an error); 0 is BAD_REQUEST.
    expect((await topicsOf(ns, { limit: 1_000_000 })).topics.length).toBe(names.length);
    expect((await session.conn.call({ op: "topics", ns, limit: 0 })).error).toMatchObject({ code: "BAD_REQUEST", details: { field: "limit" } });
  });

  test("more topics than one page of 1,000: next continues to the rest", async () => {
    const ns = "tp-many";
    const names = Array.from({ length: 1200 }, (_, i) => `t${String(i).padStart(5, "0")}`);
    for (let i = 0; i < names.length; i += 1000) await enqueue(ns, names.slice(i, i + 1000).map((topic) => ({ topic })));
    const first = await topicsOf(ns);
    expect(first.topics.length).toBe(1000);
    expect(first.next).toBeDefined();
    const second = await topicsOf(ns, { after: first.next });
    expect(second.topics.length).toBe(200);
    expect(second.next).toBeUndefined();
    expect([...first.topics, ...second.topics].map((t) => t.topic)).toEqual(names);
  });
});

describe("dead letters and redrive", () => {
  test("max_attempts reached by nacks: dead with reason, listed by dead (state fields, limit), counted by topics", async () => {
    const ns = "dl-nack";
    const ids = await enqueue(ns, Array.from({ length: 4 }, (_, i) => ({ topic: "t", max_attempts: 3, payload: new Uint8Array([i]), key: `k${i}` })));
    expect(await nackUntilDead(ns, "t")).toBe(12);
    const dead = (await ok({ op: "dead", ns, topic: "t" })).items as Array<Record<string, unknown>>;
    expect(dead.map((d) => d.id).sort()).toEqual([...ids].sort());
    for (const d of dead) {
      expect(d).toMatchObject({ topic: "t", state: "dead", attempt: 3, dead_reason: "max_attempts" });
      expect(d).not.toHaveProperty("lease_expires_at_ms");
      expect(d.key).toMatch(/^k\d$/);
    }
    expect(((await ok({ op: "dead", ns, topic: "t", limit: 2 })).items as unknown[]).length).toBe(2);
    expect((await ok({ op: "dead", ns, topic: "other" })).items).toEqual([]);
    expect((await topicsOf(ns)).topics).toEqual([{ topic: "t", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 4, paused: false }]);
    expect(await dequeue(ns, [{ topic: "t", count: 10 }])).toEqual([]);
  });

  test("an at_least_once lease expiry of the last attempt makes a dead letter too", async () => {
    const ns = "dl-expiry";
    const [id] = await enqueue(ns, [{ topic: "t", max_attempts: 1, lease_ms: 50 }]);
    await dequeue(ns, [{ topic: "t" }]);
    // Wait on the server for the lease to pass: a marker delayed past it, long-polled.
    await enqueue(ns, [{ topic: "clock", delay_ms: 150 }]);
    expect((await dequeue(ns, [{ topic: "clock" }], { wait_ms: 30_000 })).length).toBe(1);
    const [s] = (await ok({ op: "get", ns, ids: [id!] })).items as Array<Record<string, unknown>>;
    expect(s).toMatchObject({ state: "dead", attempt: 1, dead_reason: "max_attempts" });
  });

  test("redrive by ids (others ignored), then all: ready with attempts reset; a parked dequeue is woken", async () => {
    const ns = "dl-redrive";
    const ids = await enqueue(ns, Array.from({ length: 5 }, () => ({ topic: "t", max_attempts: 2 })));
    await nackUntilDead(ns, "t");
    const [liveId] = await enqueue(ns, [{ topic: "t", delay_ms: 60_000 }]);
    expect(await ok({ op: "redrive", ns, topic: "t", ids: [ids[0]!, ids[1]!, liveId!, "0:99999999"] })).toMatchObject({ redriven: 2 });
    expect(await ok({ op: "redrive", ns: "dl-redrive-other", topic: "t", ids: [ids[2]!] })).toMatchObject({ redriven: 0 });
    expect(await ok({ op: "redrive", ns, topic: "wrong-topic", ids: [ids[2]!] })).toMatchObject({ redriven: 0 });
    const states = (await ok({ op: "get", ns, ids: ids.slice(0, 3) })).items as Array<Record<string, unknown>>;
    expect(states.map((s) => [s.state, s.attempt])).toEqual([["ready", 0], ["ready", 0], ["dead", 2]]);
    expect(states[0]).not.toHaveProperty("dead_reason");
    const again = await dequeue(ns, [{ topic: "t", count: 10 }]);
    expect(again.map((d) => d.attempt)).toEqual([1, 1]);
    await ok({ op: "ack", ns, receipts: again.map((d) => d.receipt) });
    // Redrive all while a worker is parked on the topic.
    const waiter = await RawConnection.connect(session.server.port);
    const parked = waiter.send({ op: "dequeue", ns, topics: [{ topic: "t", count: 10 }], wait_ms: 30_000 });
    await waiter.call({ op: "ping" });
    expect(await ok({ op: "redrive", ns, topic: "t" })).toMatchObject({ redriven: 3 });
    const woke = (await waiter.reply(parked)).items as Delivery[];
    expect(woke.length).toBeGreaterThan(0);
    expect(woke.every((d) => d.attempt === 1)).toBe(true);
    waiter.close();
    expect((await ok({ op: "dead", ns, topic: "t" })).items).toEqual([]);
  });
});

describe("stats", () => {
  test("counters and gauges per namespace, snake_case fields, names unchanged, server section", async () => {
    const ns = "statsNs";
    await enqueue(ns, [{ topic: "myTopic" }, { topic: "myTopic" }, { topic: "myTopic", delay_ms: 60_000 }, { topic: "other", max_attempts: 1 }]);
    const [d1, d2] = await dequeue(ns, [{ topic: "myTopic", count: 2 }]);
    await ok({ op: "ack", ns, receipts: [d1!.receipt] });
    const [o] = await dequeue(ns, [{ topic: "other" }]);
    await ok({ op: "nack", ns, items: [{ receipt: o!.receipt }] });
    const stats = await ok({ op: "stats", ns });
    expect(typeof stats.now_ms).toBe("number");
    const n = (stats.namespaces as Record<string, Record<string, unknown>>)[ns]!;
    expect(n).toBeDefined();
    expect(n).toMatchObject({ ready: 0, delayed: 1, waiting: 0, leased: 1, dead: 1, topic_count: 2, topics_truncated: false, parked_waiters: 0 });
    // Both topics were asked by a worker without capabilities, and nothing ready is left for anyone.
    const nobodyStuck = { asked: true, items: 0, signatures: [] };
    expect(n.topics).toEqual({
      myTopic: { ready: 0, delayed: 1, waiting: 0, leased: 1, dead: 0, unmatchable: expect.objectContaining(nobodyStuck) },
      other: { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 1, unmatchable: expect.objectContaining(nobodyStuck) },
    });
    expect(n.counters).toEqual({ enqueued: 4, delivered: 3, acked: 1, nacked: 1, expired: 0, cancelled: 0, dead: 1, redriven: 0 });
    expect(stats.totals).toMatchObject({ ready: 0, delayed: 1, leased: 1, dead: 1, topics: 2 });
    expect(stats.server).toMatchObject({ connections: expect.any(Number), requests_in_flight: expect.any(Number), output_bytes_unsent: expect.any(Number), uptime_ms: expect.any(Number) });
    expect(Object.keys(stats)).not.toContain("engine"); // only without ns
    await ok({ op: "ack", ns, receipts: [d2!.receipt] });
    // Without ns: every namespace, plus the engine section.
    const everything = await ok({ op: "stats" });
    expect(Object.keys(everything.namespaces as object)).toContain(ns);
    expect((everything.namespaces as Record<string, { counters: { acked: number } }>)[ns]!.counters.acked).toBe(2);
    expect(everything.engine).toMatchObject({ items: expect.any(Number), signatures: expect.any(Number) });
    for (const key of Object.keys(everything.engine as object)) expect(key).toMatch(/^[a-z0-9_]+$/);
    // A namespace nobody used: zero counts (or absent), never an error.
    expect((await ok({ op: "stats", ns: "never-used" })).ok).toBe(true);
  });
});
