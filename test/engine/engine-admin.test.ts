// Goal: idempotency keys, topic listing and pagination, namespace quotas,
// stats, shard health and commit failures, and recovery after a restart.

import { describe, expect, test } from "bun:test";
import { dequeued, Harness, failure, item, unwrap } from "./support/harness.ts";
import { closedShardRetryAfterMs } from "./support/shard-gate.ts";

describe("idempotency keys", () => {
  test("a live key returns the same id, in a later batch and within one batch", async () => {
    const h = new Harness();
    const [a, b, c] = await h.enqueue("n", [item("t", { key: "k" }), item("t", { key: "other" }), item("t", { key: "k" })]);
    expect(c).toBe(a as string);
    expect(b).not.toBe(a as string);
    expect(await h.enqueue("n", [item("t", { key: "k" })])).toEqual([a as string]);
    // Same key in another topic or namespace is a different item.
    expect((await h.enqueue("n", [item("u", { key: "k" })]))[0]).not.toBe(a as string);
    expect((await h.enqueue("m", [item("t", { key: "k" })]))[0]).not.toBe(a as string);
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics.find((t) => t.topic === "t")?.ready).toBe(2);
  });

  test("the key holds while the item is dead, and is free once it ends", async () => {
    const h = new Harness();
    const [a] = await h.enqueue("n", [item("t", { key: "k", maxAttempts: 1 })]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    await h.settle(h.engine.nack("n", [{ receipt: d!.receipt, delayMs: null, metadata: null }], h.now));
    expect(await h.enqueue("n", [item("t", { key: "k" })])).toEqual([a as string]);
    await h.settle(h.engine.cancel("n", [a as string], h.now));
    expect((await h.enqueue("n", [item("t", { key: "k" })]))[0]).not.toBe(a as string);
  });

  test("a re-enqueue while the first is committing waits for that commit", async () => {
    const h = new Harness();
    h.store.pauseCommits();
    const first = unwrap(h.engine.enqueue("n", [item("t", { key: "k" })], h.now));
    const second = unwrap(h.engine.enqueue("n", [item("t", { key: "k" })], h.now));
    expect(second.value.ids).toEqual(first.value.ids);
    let settled = false;
    const done = second.durable!.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    h.store.resumeCommits();
    await done;
    expect(settled).toBe(true);
  });
});

describe("topics", () => {
  test("byte order of name, prefix, limit and after/next; empty topics vanish", async () => {
    const h = new Harness();
    const names = ["b", "a", "ab", "é", "z", "\u{1F600}", "\uFFFF", "ac"];
    await h.enqueue("n", names.map((t) => item(t)));
    const all = h.engine.topics("n", { prefix: null, limit: 100, after: null });
    const bytes = (s: string) => Buffer.from(s, "utf8");
    const expected = [...names].sort((x, y) => Buffer.compare(bytes(x), bytes(y)));
    expect(all.topics.map((t) => t.topic)).toEqual(expected);
    expect(all.next).toBeNull();
    const p1 = h.engine.topics("n", { prefix: null, limit: 3, after: null });
    expect(p1.topics.map((t) => t.topic)).toEqual(expected.slice(0, 3));
    expect(p1.next).toBe(expected[2] as string);
    const p2 = h.engine.topics("n", { prefix: null, limit: 3, after: p1.next });
    expect(p2.topics.map((t) => t.topic)).toEqual(expected.slice(3, 6));
    const pa = h.engine.topics("n", { prefix: "a", limit: 2, after: null });
    expect(pa.topics.map((t) => t.topic)).toEqual(["a", "ab"]);
    expect(pa.next).toBe("ab");
    expect(h.engine.topics("n", { prefix: "a", limit: 2, after: "ab" }).topics.map((t) => t.topic)).toEqual(["ac"]);
    expect(h.engine.topics("n", { prefix: "a", limit: 3, after: null }).next).toBeNull();
    const ds = await h.dequeue("n", [["a", 1]]);
    await h.settleAck(h.engine.ack("n", [ds[0]!.receipt], h.now));
    expect(h.engine.topics("n", { prefix: "a", limit: 10, after: null }).topics.map((t) => t.topic)).toEqual(["ab", "ac"]);
    expect(h.engine.topics("nobody", { prefix: null, limit: 10, after: null })).toEqual({ topics: [], next: null });
  });

  test("counts per state", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t"), item("t"), item("t", { delayMs: 10 })]);
    await h.dequeue("n", [["t", 1]]);
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics).toEqual([
      { topic: "t", ready: 1, delayed: 1, waiting: 0, leased: 1, dead: 0, paused: false },
    ]);
  });
});

describe("quotas", () => {
  test("limit-1, limit, limit+1 items per minute; refill is continuous", async () => {
    const h = new Harness({ namespaces: { q: { enqueuePerMinute: 60 } } });
    const batch = (n: number) => Array.from({ length: n }, () => item("t"));
    await h.enqueue("q", batch(59));
    await h.enqueue("q", batch(1));
    const f = failure(h.engine.enqueue("q", batch(1), h.now));
    expect(f.kind).toBe("rate_limited");
    expect(f.retryAfterMs).toBe(1000);
    h.clock.advance(999);
    expect(failure(h.engine.enqueue("q", batch(1), h.now)).retryAfterMs).toBe(1);
    h.clock.advance(1);
    await h.enqueue("q", batch(1));
    // Other namespaces are unlimited.
    await h.enqueue("free", batch(500));
  });

  test("a batch larger than the whole bucket is TOO_LARGE; re-enqueued keys do not count", async () => {
    const h = new Harness({ namespaces: { q: { enqueuePerMinute: 3 } } });
    const f = failure(h.engine.enqueue("q", [item("t", { requires: { gpu: true } }), item("t"), item("t"), item("t")], h.now));
    expect(f.kind).toBe("over_limit");
    h.check(); // the refused batch left no signature reference behind
    const ids = await h.enqueue("q", [item("t", { key: "a" }), item("t", { key: "b" }), item("t", { key: "c" })]);
    expect(await h.enqueue("q", [item("t", { key: "a" }), item("t", { key: "b" })])).toEqual(ids.slice(0, 2));
  });
});

describe("shards and storage failures", () => {
  test("a shard that takes no writes (cluster-style) is skipped by enqueue; ops on its items are UNAVAILABLE before any change", async () => {
    const h = new Harness({ shards: 2, shardGate: true });
    const [id] = await h.enqueue("n", [item("t", { leaseMs: 1000 })]);
    const shard = Number((id as string).split(":")[0]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    h.gate!.closed.add(shard);
    const f = failure(h.engine.ack("n", [d!.receipt], h.now));
    expect(f.kind).toBe("storage_unavailable");
    expect(f.retryAfterMs).toBe(closedShardRetryAfterMs);
    expect(f.message).toContain(`shard ${shard} is not owned here`);
    expect(h.state("n", id as string)).toBe("leased");
    expect(failure(h.engine.cancel("n", [id as string], h.now)).kind).toBe("storage_unavailable");
    const [other] = await h.enqueue("n", [item("t")]);
    expect(Number((other as string).split(":")[0])).not.toBe(shard);
    // Every shard closed: no shard for an enqueue.
    h.gate!.closed.add(1 - shard);
    const none = failure(h.engine.enqueue("n", [item("t")], h.now));
    expect(none).toMatchObject({ kind: "storage_unavailable", retryAfterMs: closedShardRetryAfterMs });
    h.check();
  });

  test("failing commits open the store's breaker: every shard refuses writes, ops fail before any change, dequeue delivers nothing", async () => {
    const h = new Harness({ shards: 2 });
    const [id] = await h.enqueue("n", [item("t", { leaseMs: 1000 })]);
    const [ready] = await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    const shard = Number((id as string).split(":")[0]);
    // Only one shard's commits fail, yet the breaker is the store's: one LMDB transaction covers every shard.
    h.store.failShard(shard);
    for (let i = 0; i < 10 && h.writer.allWritable(h.now); i++) {
      const r = h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 1000 }], h.now);
      if (r.ok) await r.value.durable?.catch(() => undefined);
    }
    expect(h.writer.breakerState(h.now)).toBe("open");
    const f = failure(h.engine.ack("n", [d!.receipt], h.now));
    expect(f.kind).toBe("storage_unavailable");
    expect(f.retryAfterMs).toBeGreaterThan(0);
    expect(f.message).toContain("circuit breaker open");
    expect(h.state("n", id as string)).toBe("leased");
    expect(failure(h.engine.enqueue("n", [item("t")], h.now)).kind).toBe("storage_unavailable");
    expect(await h.dequeue("n", [["t", 5]])).toEqual([]);
    expect(h.state("n", ready as string)).toBe("ready");
    h.check();
  });

  test("no shard takes writes: enqueue is UNAVAILABLE with retryAfterMs", async () => {
    const h = new Harness({ shards: 1 });
    h.store.failShard(0);
    for (let i = 0; i < 10 && h.writer.allWritable(h.now); i++) {
      const r = h.engine.enqueue("n", [item("t")], h.now);
      if (r.ok) await r.value.durable?.catch(() => undefined);
    }
    const f = failure(h.engine.enqueue("n", [item("t")], h.now));
    expect(f.kind).toBe("storage_unavailable");
    expect(f.retryAfterMs).toBeGreaterThan(0);
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics).toEqual([]);
  });

  test("an enqueue whose commit fails is rolled out of memory and was never deliverable", async () => {
    const h = new Harness({ shards: 1 });
    h.store.failShard(0);
    const reply = unwrap(h.engine.enqueue("n", [item("t", { key: "k" })], h.now));
    // Not deliverable before its commit.
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(0);
    await expect(reply.durable).rejects.toThrow();
    expect(h.state("n", reply.value.ids[0] as string)).toBeNull();
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics).toEqual([]);
    h.store.healShard(0);
    h.check();
  });

  test("an at_most_once dequeue waits for its lease to be durable; if that fails the item is ready again", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t", { delivery: "at_most_once" })]);
    h.store.failShard(0);
    const outcome = dequeued(h.engine.dequeue("n", { topics: [{ topic: "t", count: 1 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 }, h.now));
    if (outcome.kind !== "done") throw new Error("expected done");
    expect(outcome.durable).not.toBeNull();
    await expect(outcome.durable).rejects.toThrow();
    expect(h.state("n", id as string)).toBe("ready");
    h.check();
  });
});

describe("recovery", () => {
  test("ready, delayed, leased, dead and keys come back; a lease that ended while down expires at once", async () => {
    const h = new Harness();
    const [ready, delayed, leased, dead] = await h.enqueue("n", [
      item("t", { priority: 9, key: "r" }),
      item("t", { delayMs: 5000 }),
      item("t", { priority: 0, leaseMs: 100 }),
      item("t", { priority: 1, maxAttempts: 1 }),
    ]);
    const ds = await h.dequeue("n", [["t", 2]]);
    expect(ds.map((d) => d.id)).toEqual([leased as string, dead as string]);
    await h.settle(h.engine.nack("n", [{ receipt: ds[1]!.receipt, delayMs: null, metadata: null }], h.now));
    await h.restart();
    h.check();
    expect(h.state("n", ready as string)).toBe("ready");
    expect(h.state("n", delayed as string)).toBe("delayed");
    expect(h.state("n", leased as string)).toBe("leased");
    expect(h.state("n", dead as string)).toBe("dead");
    expect(await h.enqueue("n", [item("t", { key: "r" })])).toEqual([ready as string]);
    h.clock.advance(200);
    await h.restart();
    expect(h.engine.nextDeadlineMs()).toBeLessThanOrEqual(h.now);
    expect(h.state("n", leased as string)).toBe("ready");
    // The old receipt stays stale across the restart.
    expect((await h.settleAck(h.engine.ack("n", [ds[0]!.receipt], h.now))).stale).toEqual([ds[0]!.receipt]);
    const again = await h.dequeue("n", [["t", 5]]);
    expect(again.map((d) => [d.id, d.attempt])).toEqual([
      [leased as string, 2],
      [ready as string, 1],
    ]);
    // New ids keep growing after a restart.
    const [fresh] = await h.enqueue("n", [item("t")]);
    expect(Number((fresh as string).split(":")[1])).toBeGreaterThan(Number((dead as string).split(":")[1]));
    h.check();
  });
});

describe("stats", () => {
  test("shape: totals, counters, per-namespace topics, waiters; namespace filter", async () => {
    const h = new Harness({ namespaces: { a: { enqueuePerMinute: 100 } } });
    await h.enqueue("a", [item("t"), item("t")]);
    await h.enqueue("b", [item("u")]);
    const [d] = await h.dequeue("a", [["t", 1]]);
    await h.settleAck(h.engine.ack("a", [d!.receipt], h.now));
    dequeued(h.engine.dequeue("b", { topics: [{ topic: "none", count: 1 }], capabilities: null, waitMs: 1000, leaseMs: null, owner: 7 }, h.now));
    const all = h.engine.stats(null, h.now) as any;
    expect(all.totals).toEqual({ ready: 2, delayed: 0, waiting: 0, leased: 0, dead: 0, topics: 2, parkedWaiters: 1 });
    expect(all.counters).toMatchObject({ enqueued: 3, delivered: 1, acked: 1 });
    expect(all.namespaces.a).toMatchObject({ ready: 1, topicCount: 1, topics: { t: { ready: 1 } }, quota: { enqueuePerMinute: 100, available: 98 } });
    expect(all.engine).toMatchObject({ items: 2, outcomesRetained: 1 });
    const scoped = h.engine.stats(["b"], h.now) as any;
    expect(Object.keys(scoped.namespaces)).toEqual(["b"]);
    expect(scoped.engine).toBeUndefined();
    expect(scoped.totals.parkedWaiters).toBe(1);
    h.engine.releaseWaiters();
  });
});
