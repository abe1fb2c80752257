// Goal: `pause` and `resume` in the engine, on a ManualClock: a paused topic
// delivers nothing while everything else goes on, parked dequeues are not
// woken by it and are served when it ends (by resume or by its deadline), a
// paused topic lives while empty, a pause survives a restart (memory store
// here; LMDB in pause-lmdb.test.ts), and the paused-topics limit holds.

import { describe, expect, test } from "bun:test";
import { dequeued, Harness, failure, item, take, unwrap } from "../support/harness.ts";

function topicEntry(h: Harness, ns: string, topic: string) {
  return h.engine.topics(ns, { prefix: topic, limit: 1, after: null }).topics.find((t) => t.topic === topic) ?? null;
}

describe("pause", () => {
  test("a paused topic delivers nothing; other topics and every other op go on", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t"), item("t", { delayMs: 100 }), item("u")]);
    const paused = await h.settle(h.engine.pause("n", "t", null, h.now));
    expect(paused).toEqual({ pausedUntilMs: null });
    expect(await h.dequeue("n", [["t", 5], ["u", 5]])).toHaveLength(1);
    // Enqueues go on, the delay comes due, the counts move.
    await h.enqueue("n", [item("t")]);
    h.advance(100);
    expect(topicEntry(h, "n", "t")).toEqual({ topic: "t", ready: 3, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true });
    expect(await h.dequeue("n", [["t", 5]])).toHaveLength(0);
    h.check();
    expect(await h.settle(h.engine.resume("n", "t", h.now))).toEqual({ resumed: true });
    expect(await h.dequeue("n", [["t", 5]])).toHaveLength(3);
    expect(await h.settle(h.engine.resume("n", "t", h.now))).toEqual({ resumed: false });
    h.check();
  });

  test("leases, acks, nacks and TTL go on in a paused topic", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t", { leaseMs: 50 }), item("t"), item("t", { ttlMs: 30 })]);
    const [a, b] = await h.dequeue("n", [["t", 2]]);
    await h.settle(h.engine.pause("n", "t", null, h.now));
    expect(await h.settleAck(h.engine.ack("n", [b!.receipt], h.now))).toEqual({ acked: 1, stale: [] });
    h.advance(50);
    // The lease of `a` expired: ready again, not delivered; the TTL item ended.
    expect(h.state("n", a!.id)).toBe("ready");
    expect(topicEntry(h, "n", "t")).toMatchObject({ ready: 1, leased: 0 });
    expect(await h.dequeue("n", [["t", 5]])).toHaveLength(0);
    h.check();
  });

  test("a parked dequeue is not woken by a paused topic, and is served when the pause ends by itself", async () => {
    const h = new Harness();
    await h.settle(h.engine.pause("n", "t", 1000, h.now));
    expect(topicEntry(h, "n", "t")).toEqual({ topic: "t", ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true, pausedUntilMs: h.now + 1000 });
    const outcome = dequeued(h.engine.dequeue("n", take([["t", 1]], { waitMs: 5000 }), h.now));
    expect(outcome.kind).toBe("parked");
    if (outcome.kind !== "parked") return;
    let settled = false;
    const answered = outcome.waiter.then((reply) => {
      settled = true;
      return reply;
    });
    await h.enqueue("n", [item("t")]);
    h.advance(999);
    await Promise.resolve();
    expect(settled).toBe(false);
    expect(h.engine.nextDeadlineMs()).toBe(h.now + 1);
    h.advance(1);
    const reply = await answered;
    expect(reply.deliveries).toHaveLength(1);
    expect(topicEntry(h, "n", "t")).toMatchObject({ paused: false, leased: 1 });
    h.check();
  });

  test("resume serves parked dequeues at once", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t")]);
    await h.settle(h.engine.pause("n", "t", null, h.now));
    const outcome = dequeued(h.engine.dequeue("n", take([["t", 1]], { waitMs: 5000 }), h.now));
    if (outcome.kind !== "parked") throw new Error("expected a parked dequeue");
    await h.settle(h.engine.resume("n", "t", h.now));
    expect((await outcome.waiter).deliveries).toHaveLength(1);
  });

  test("pausing a paused topic replaces its end (timed to untimed and back)", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t")]);
    await h.settle(h.engine.pause("n", "t", 100, h.now));
    expect(await h.settle(h.engine.pause("n", "t", null, h.now))).toEqual({ pausedUntilMs: null });
    h.advance(200);
    expect(topicEntry(h, "n", "t")?.paused).toBe(true);
    expect(await h.settle(h.engine.pause("n", "t", 50, h.now))).toEqual({ pausedUntilMs: h.now + 50 });
    h.advance(49);
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(0);
    h.advance(1);
    expect(await h.dequeue("n", [["t", 1]])).toHaveLength(1);
    h.check();
  });

  test("a paused topic lives while empty, and goes when its pause ends", async () => {
    const h = new Harness();
    await h.settle(h.engine.pause("n", "empty", 10, h.now));
    expect(topicEntry(h, "n", "empty")).toMatchObject({ ready: 0, paused: true });
    await h.enqueue("n", [item("empty")]);
    const id = (await h.enqueue("n", [item("empty")]))[0]!;
    await h.settle(h.engine.cancel("n", [id], h.now));
    h.advance(10);
    expect(topicEntry(h, "n", "empty")).toMatchObject({ ready: 1, paused: false });
    await h.settle(h.engine.pause("n", "gone", null, h.now));
    await h.settle(h.engine.resume("n", "gone", h.now));
    expect(topicEntry(h, "n", "gone")).toBeNull();
    h.check();
  });

  test("a pause survives a restart, a timed one keeps its end, one that ended while down ends at the first tick", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("a"), item("b"), item("c")]);
    await h.settle(h.engine.pause("n", "a", null, h.now));
    await h.settle(h.engine.pause("n", "b", 1000, h.now));
    await h.settle(h.engine.pause("n", "c", 10, h.now));
    await h.settle(h.engine.pause("n", "empty", null, h.now));
    const bEnd = h.now + 1000;
    await h.restart();
    h.clock.advance(20);
    h.check();
    expect(await h.dequeue("n", [["a", 1], ["b", 1]])).toHaveLength(0);
    // The first op ran the due deadline: c's pause is over.
    expect(await h.dequeue("n", [["c", 1]])).toHaveLength(1);
    expect(topicEntry(h, "n", "b")).toMatchObject({ paused: true, pausedUntilMs: bEnd });
    expect(topicEntry(h, "n", "empty")).toMatchObject({ paused: true });
    await h.settle(h.engine.resume("n", "a", h.now));
    await h.restart();
    expect(topicEntry(h, "n", "a")).toMatchObject({ paused: false });
    expect(topicEntry(h, "n", "c")?.paused).toBe(false);
    // The ended pause's record was deleted: a restart does not bring it back.
    expect([...h.store.loadPauses()].map((p) => p.topic).sort()).toEqual(["b", "empty"]);
    h.check();
  });

  test("a pause whose commit was lost is gone after a crash; the reply waited for the commit", async () => {
    const h = new Harness();
    h.store.pauseCommits();
    const reply = unwrap(h.engine.pause("n", "t", null, h.now));
    expect(reply.durable).not.toBeNull();
    let settled = false;
    void reply.durable!.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    h.crash();
    expect(topicEntry(h, "n", "t")).toBeNull();
  });

  test("paused topics are limited: limit-1, limit, limit+1; re-pausing a paused topic is not a new one", async () => {
    const h = new Harness({ limits: { pausedTopicsMax: 2 } });
    await h.settle(h.engine.pause("n", "a", null, h.now));
    await h.settle(h.engine.pause("n", "b", null, h.now));
    const refused = failure(h.engine.pause("n", "c", null, h.now));
    expect(refused.kind).toBe("over_limit");
    expect(refused.at).toEqual({ kind: "topic" });
    expect(topicEntry(h, "n", "c")).toBeNull();
    await h.settle(h.engine.pause("n", "a", 10, h.now));
    await h.settle(h.engine.resume("n", "b", h.now));
    await h.settle(h.engine.pause("n", "c", null, h.now));
    expect(h.engine.stats(null, h.now).engine?.pausedTopics).toBe(2);
    h.check();
  });
});
