// Goal: the item life cycle through the engine's ops — delivery order,
// delays, leases and their expiry in both modes, max_attempts, ack / nack /
// extend with stale receipts, TTL (including leased-then-ack), cancel, get and
// outcome retention, dead letters and redrive.

import { ackedOutcomeBounds } from "../../src/limits.ts";
import { describe, expect, test } from "bun:test";
import { Harness, item, unwrap } from "./support/harness.ts";

describe("delivery order", () => {
  test("priority, then deliver_at_ms, then enqueue order, across shards", async () => {
    const h = new Harness({ shards: 4 });
    const now = h.now;
    // One enqueue per item so they land on different shards.
    const a = (await h.enqueue("n", [item("t", { priority: 5 })]))[0];
    const b = (await h.enqueue("n", [item("t", { priority: 1 })]))[0];
    const c = (await h.enqueue("n", [item("t", { priority: 1, deliverAtMs: now - 10 })]))[0];
    const d = (await h.enqueue("n", [item("t", { priority: 1 })]))[0];
    const e = (await h.enqueue("n", [item("t", { priority: -3 })]))[0];
    h.check();
    const got = await h.dequeue("n", [["t", 10]]);
    expect(got.map((x) => x.id)).toEqual([e, c, b, d, a] as string[]);
    expect(got.every((x) => x.attempt === 1)).toBe(true);
    h.check();
  });

  test("batches that join one commit go to one shard; the next commit's go to the next shard", async () => {
    const h = new Harness({ shards: 3 });
    const shard = (id: string) => Number(id.split(":")[0]);
    // Three batches in one turn: one commit, so one shard (fewer B-trees rewritten per commit).
    const together = [0, 1, 2].map(() => unwrap(h.engine.enqueue("n", [item("t"), item("t")], h.now)));
    await Promise.all(together.map((reply) => reply.durable));
    const firstShard = shard(together[0]!.value.ids[0]!);
    expect(together.flatMap((reply) => reply.value.ids).map(shard)).toEqual(new Array(6).fill(firstShard));
    const [later] = await h.enqueue("n", [item("t")]);
    expect(shard(later!)).toBe((firstShard + 1) % 3);
    const [third] = await h.enqueue("n", [item("t")]);
    expect(shard(third!)).toBe((firstShard + 2) % 3);
    h.check();
  });

  test("a batch goes to one shard; shards are used round robin", async () => {
    const h = new Harness({ shards: 3 });
    const ids1 = await h.enqueue("n", [item("t"), item("t"), item("t")]);
    const ids2 = await h.enqueue("n", [item("t")]);
    const shard = (id: string) => id.split(":")[0];
    expect(new Set(ids1.map(shard)).size).toBe(1);
    expect(shard(ids2[0] as string)).not.toBe(shard(ids1[0] as string));
  });

  test("count limits the items per topic; several topics in one dequeue", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("a"), item("a"), item("a"), item("b")]);
    const got = await h.dequeue("n", [["a", 2], ["b", 5], ["missing", 1]]);
    expect(got.map((x) => x.topic)).toEqual(["a", "a", "b"]);
    expect(await h.dequeue("n", [["a", 5]])).toHaveLength(1);
  });

  test("another namespace's items are invisible", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t")]);
    expect(await h.dequeue("other", [["t", 1]])).toHaveLength(0);
    expect(h.state("other", id as string)).toBeNull();
    expect(unwrap(h.engine.cancel("other", [id as string], h.now)).value.missing).toEqual([id as string]);
  });
});

describe("delays", () => {
  test("a delayed item is delivered at deliver_at_ms, not a ms before", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { delayMs: 1000 })]);
    expect(h.state("n", id as string)).toBe("delayed");
    expect(h.engine.nextDeadlineMs()).toBe(h.now + 1000);
    h.advance(999);
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(0);
    h.advance(1);
    expect(h.state("n", id as string)).toBe("ready");
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(1);
    h.check();
  });

  test("an op at a later nowMs sees due deadlines without a tick", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { delayMs: 50 })]);
    h.clock.advance(50);
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(1);
  });
});

describe("leases", () => {
  test("at_least_once: expiry makes it ready again; the old receipt is stale", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { leaseMs: 100 })]);
    const [first] = await h.dequeue("n", [["t", 1]]);
    expect(first?.leaseExpiresAtMs).toBe(h.now + 100);
    expect(h.state("n", id as string)).toBe("leased");
    h.advance(99);
    expect(h.state("n", id as string)).toBe("leased");
    h.advance(1);
    expect(h.state("n", id as string)).toBe("ready");
    const [second] = await h.dequeue("n", [["t", 1]], { leaseMs: 500 });
    expect(second?.attempt).toBe(2);
    expect(second?.leaseExpiresAtMs).toBe(h.now + 500);
    expect(second?.receipt).not.toBe(first?.receipt);
    const acked = await h.settleAck(h.engine.ack("n", [first!.receipt, second!.receipt], h.now));
    expect(acked).toEqual({ acked: 1, stale: [first!.receipt] });
    expect(h.state("n", id as string)).toBe("ended:acked");
    h.check();
  });

  test("at_most_once: expiry ends the item expired, whatever the attempt", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { delivery: "at_most_once", leaseMs: 10, maxAttempts: 5 })]);
    const got = await h.dequeue("n", [["t", 1]]);
    expect(got).toHaveLength(1);
    h.advance(10);
    expect(h.state("n", id as string)).toBe("ended:expired");
    h.check();
  });

  test("max_attempts: expiry of the last attempt makes a dead letter; redrive resets attempts", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { leaseMs: 10, maxAttempts: 2 })]);
    await h.dequeue("n", [["t", 1]]);
    h.advance(10);
    expect(h.state("n", id as string)).toBe("ready");
    await h.dequeue("n", [["t", 1]]);
    h.advance(10);
    expect(h.state("n", id as string)).toBe("dead");
    const dead = h.engine.dead("n", "t", 10).items;
    expect(dead.map((d) => [d.id, d.deadReason, d.attempt])).toEqual([[id as string, "max_attempts", 2]]);
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics[0]?.dead).toBe(1);
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(0);
    expect(await h.settle(h.engine.redrive("n", "t", null, h.now))).toEqual({ redriven: 1 });
    const [again] = await h.dequeue("n", [["t", 1]]);
    expect(again?.attempt).toBe(1);
    h.check();
  });

  test("nack: ready again after delay_ms with new metadata; nack of the last attempt is a dead letter", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { maxAttempts: 2 })]);
    const [d1] = await h.dequeue("n", [["t", 1]]);
    const meta = new Uint8Array([7]);
    expect(await h.settle(h.engine.nack("n", [{ receipt: d1!.receipt, delayMs: 100, metadata: meta }], h.now))).toEqual({ nacked: 1, stale: [] });
    expect(h.state("n", id as string)).toBe("delayed");
    expect(await h.settle(h.engine.nack("n", [{ receipt: d1!.receipt, delayMs: null, metadata: null }], h.now))).toEqual({ nacked: 0, stale: [d1!.receipt] });
    h.advance(100);
    const [d2] = await h.dequeue("n", [["t", 1]]);
    expect(d2?.metadata).toEqual(meta);
    expect(d2?.attempt).toBe(2);
    await h.settle(h.engine.nack("n", [{ receipt: d2!.receipt, delayMs: null, metadata: null }], h.now));
    expect(h.state("n", id as string)).toBe("dead");
    h.check();
  });

  test("extend lengthens or shortens the lease from now", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { leaseMs: 100 })]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    h.advance(50);
    expect(await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 1000 }], h.now))).toEqual({ extended: 1, stale: [] });
    h.advance(900);
    expect(h.state("n", id as string)).toBe("leased");
    expect(await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 1 }], h.now))).toEqual({ extended: 1, stale: [] });
    h.advance(1);
    expect(h.state("n", id as string)).toBe("ready");
    expect(await h.settle(h.engine.extend("n", [{ receipt: d!.receipt, leaseMs: 10 }], h.now))).toEqual({ extended: 0, stale: [d!.receipt] });
    h.check();
  });

  test("malformed, unknown and other-namespace receipts are stale", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    // The live receipt's own id and delivery count without its boot (the older three-part form) is stale too.
    const withoutBoot = d!.receipt.slice(0, d!.receipt.lastIndexOf(":"));
    const bad = ["", "x", "0:0", "0:0:0", "00:1:1", "1:2:3:4", `${d!.receipt}0`, "99:1:1", "99:1:1:1", withoutBoot, `${withoutBoot}:0`];
    const r = await h.settleAck(h.engine.ack("n", bad, h.now));
    expect(r).toEqual({ acked: 0, stale: bad });
    expect((await h.settleAck(h.engine.ack("m", [d!.receipt], h.now))).stale).toEqual([d!.receipt]);
    expect((await h.settleAck(h.engine.ack("n", [d!.receipt, d!.receipt], h.now)))).toEqual({ acked: 1, stale: [d!.receipt] });
  });
});

describe("TTL", () => {
  test("ends a ready, delayed or dead item expired", async () => {
    const h = new Harness();
    const [ready, delayed] = await h.enqueue("n", [item("t", { ttlMs: 100 }), item("t", { ttlMs: 100, delayMs: 500 })]);
    h.advance(99);
    expect(h.state("n", ready as string)).toBe("ready");
    h.advance(1);
    expect(h.state("n", ready as string)).toBe("ended:expired");
    expect(h.state("n", delayed as string)).toBe("ended:expired");
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics).toEqual([]);
    h.check();
  });

  test("a leased item past its TTL may still be acked until its lease ends", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { ttlMs: 100, leaseMs: 1000 })]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    h.advance(500);
    expect(h.state("n", id as string)).toBe("leased");
    expect(await h.settleAck(h.engine.ack("n", [d!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    expect(h.state("n", id as string)).toBe("ended:acked");
  });

  test("a leased item past its TTL ends expired when its lease ends (either mode) or is nacked", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("t", { ttlMs: 100, leaseMs: 1000 }), item("t", { ttlMs: 100, leaseMs: 1000 })]);
    const ds = await h.dequeue("n", [["t", 2]]);
    h.advance(200);
    await h.settle(h.engine.nack("n", [{ receipt: ds[1]!.receipt, delayMs: null, metadata: null }], h.now));
    expect(h.state("n", b as string)).toBe("ended:expired");
    expect(h.state("n", a as string)).toBe("leased");
    h.advance(800);
    expect(h.state("n", a as string)).toBe("ended:expired");
    h.check();
  });
});

describe("cancel and get", () => {
  test("cancel works in every live state and makes a leased item's receipt stale", async () => {
    const h = new Harness();
    const [ready, delayed, leased] = await h.enqueue("n", [item("t", { priority: 1 }), item("t", { delayMs: 100 }), item("t", { priority: 0 })]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    expect(d?.id).toBe(leased as string);
    const r = await h.settle(h.engine.cancel("n", [ready as string, delayed as string, leased as string, "nope", "9:9", ready as string], h.now));
    expect(r).toEqual({ cancelled: 3, missing: ["nope", "9:9"] });
    expect(h.state("n", leased as string)).toBe("ended:cancelled");
    expect((await h.settleAck(h.engine.ack("n", [d!.receipt], h.now))).stale).toEqual([d!.receipt]);
    h.check();
  });

  test("get reports item states with optional fields, in request order", async () => {
    const h = new Harness();
    const [id] = await h.enqueue("n", [item("t", { key: "k1", priority: 3, requires: { gpu: true } })]);
    const got = unwrap(h.engine.get("n", [id as string, "bogus", "0:999999"], h.now)).items;
    expect(got[0]).toMatchObject({ id, topic: "t", state: "ready", priority: 3, attempt: 0, key: "k1", requires: { gpu: true } });
    expect(got[0]).not.toHaveProperty("leaseExpiresAtMs");
    expect(got[0]).not.toHaveProperty("deadReason");
    expect(got.slice(1)).toEqual([null, null]);
  });

  test("an outcome is kept for outcome_retention_ms, then null — also across a restart", async () => {
    const h = new Harness({ limits: { outcomeRetentionMs: 1000 } });
    const [id] = await h.enqueue("n", [item("t")]);
    await h.settle(h.engine.cancel("n", [id as string], h.now));
    h.advance(999);
    expect(h.state("n", id as string)).toBe("ended:cancelled");
    expect(h.state("other", id as string)).toBeNull();
    await h.restart();
    expect(h.state("n", id as string)).toBe("ended:cancelled");
    h.advance(1);
    expect(h.state("n", id as string)).toBeNull();
    await h.restart();
    expect(h.state("n", id as string)).toBeNull();
  });
});

describe("acked outcomes", () => {
  test("an acked outcome is kept for at least outcome_retention_ms and at most one block span more, across restarts; its log record is purged", async () => {
    const retentionMs = 60_000;
    const h = new Harness({ limits: { outcomeRetentionMs: retentionMs } });
    const ids = await h.enqueue("n", [item("t"), item("t"), item("t")]);
    const ds = await h.dequeue("n", [["t", 3]]);
    await h.settleAck(h.engine.ack("n", ds.map((d) => d.receipt), h.now));
    for (const id of ids) expect(h.state("n", id)).toBe("ended:acked");
    expect(h.state("other", ids[0] as string)).toBeNull();
    // Acked items are one acked-log record (this commit's), not an outcome record each.
    expect([...h.store.loadOutcomes()]).toEqual([]);
    expect([...h.store.loadAckedLog()].map((r) => r.keys.length)).toEqual([3]);
    await h.restart();
    for (const id of ids) expect(h.state("n", id)).toBe("ended:acked");
    h.advance(retentionMs - 1);
    for (const id of ids) expect(h.state("n", id)).toBe("ended:acked");
    h.advance(ackedOutcomeBounds.blockSpanMs + 1);
    for (const id of ids) expect(h.state("n", id)).toBeNull();
    await h.writer.drain();
    expect([...h.store.loadAckedLog()]).toEqual([]);
    await h.restart();
    for (const id of ids) expect(h.state("n", id)).toBeNull();
    h.check();
  });

  test("a dependency acked before a restart still satisfies `after` after it", async () => {
    const h = new Harness();
    const [dep] = await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    await h.settleAck(h.engine.ack("n", [(d as { receipt: string }).receipt], h.now));
    await h.restart();
    const [waiter] = await h.enqueue("n", [item("u", { after: [dep as string] })]);
    expect(h.state("n", waiter as string)).toBe("ready");
    h.check();
  });
});

describe("dead letters", () => {
  test("redrive by ids moves only this topic's dead letters; dead pages are limited", async () => {
    const h = new Harness();
    const ids = await h.enqueue("n", [item("t", { maxAttempts: 1 }), item("t", { maxAttempts: 1 }), item("u", { maxAttempts: 1 })]);
    const ds = await h.dequeue("n", [["t", 2], ["u", 1]]);
    await h.settle(h.engine.nack("n", ds.map((d) => ({ receipt: d.receipt, delayMs: null, metadata: null })), h.now));
    expect(h.engine.dead("n", "t", 1).items).toHaveLength(1);
    expect(h.engine.dead("n", "t", 10).items.map((x) => x.id)).toEqual(ids.slice(0, 2));
    const r = await h.settle(h.engine.redrive("n", "t", [ids[0] as string, ids[2] as string, "junk"], h.now));
    expect(r).toEqual({ redriven: 1 });
    expect(h.state("n", ids[0] as string)).toBe("ready");
    expect(h.state("n", ids[2] as string)).toBe("dead");
    const got = unwrap(h.engine.get("n", [ids[0] as string], h.now)).items[0];
    expect(got).toMatchObject({ attempt: 0 });
    expect(got).not.toHaveProperty("deadReason");
    h.check();
  });
});
