// Goal: parked dequeues (long-poll) wake on every event that makes an item
// ready for them, are served first come first served, time out empty, respect
// their caps (per connection and in total), and are cancelled or released
// without leasing anything.

import { describe, expect, test } from "bun:test";
import type { DequeueDone, DequeueInput } from "../../../src/engine/api.ts";
import { dequeued, Harness, failure, item, take } from "../support/harness.ts";

function park(h: Harness, topics: Array<[string, number]>, overrides: Partial<DequeueInput> = {}) {
  const outcome = dequeued(h.engine.dequeue("n", take(topics, { waitMs: 10_000, ...overrides }), h.now));
  if (outcome.kind !== "parked") throw new Error("expected parked");
  let result: DequeueDone | null = null;
  outcome.waiter.then((r) => {
    result = r;
  });
  return {
    promise: outcome.waiter,
    get result(): DequeueDone | null {
      return result;
    },
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe("waiters wake", () => {
  test("a parked dequeue keeps its own topics: the caller may reuse its input for the next dequeue", async () => {
    const h = new Harness();
    const input = take([["a", 2]], { waitMs: 10_000 });
    const outcome = dequeued(h.engine.dequeue("n", input, h.now));
    if (outcome.kind !== "parked") throw new Error("expected parked");
    // As the server's dequeue op does: the same object and entry, rewritten for the next request.
    const entry = input.topics[0]!;
    entry.topic = "b";
    entry.count = 1;
    input.waitMs = 0;
    expect(dequeued(h.engine.dequeue("n", input, h.now))).toMatchObject({ kind: "done", deliveries: [] });
    let settled: DequeueDone | null = null;
    outcome.waiter.then((r) => {
      settled = r;
    });
    const ids = await h.enqueue("n", [item("a"), item("a")]);
    await flush();
    expect((settled as DequeueDone | null)?.deliveries.map((d) => d.id)).toEqual(ids as string[]);
    h.check();
  });

  test("on enqueue (once the enqueue is durable)", async () => {
    const h = new Harness();
    const w = park(h, [["t", 2]]);
    const [id] = await h.enqueue("n", [item("t")]);
    const r = await w.promise;
    expect(r.deliveries.map((d) => d.id)).toEqual([id as string]);
    expect(h.state("n", id as string)).toBe("leased");
    h.check();
  });

  test("on nack, lease expiry, delay due, redrive and a satisfied dependency", async () => {
    const h = new Harness();
    // nack
    await h.enqueue("n", [item("t")]);
    const [d] = await h.dequeue("n", [["t", 1]]);
    let w = park(h, [["t", 1]]);
    await h.settle(h.engine.nack("n", [{ receipt: d!.receipt, delayMs: null, metadata: null }], h.now));
    expect((await w.promise).deliveries).toHaveLength(1);
    // lease expiry (the waiter's own lease from above is 30 s)
    w = park(h, [["t", 1]], { waitMs: 60_000 });
    h.advance(30_000);
    expect((await w.promise).deliveries[0]?.attempt).toBe(3);
    // delay due
    await h.enqueue("n", [item("d", { delayMs: 100 })]);
    w = park(h, [["d", 1]]);
    await flush();
    expect(w.result).toBeNull();
    h.advance(100);
    expect((await w.promise).deliveries).toHaveLength(1);
    // redrive
    await h.enqueue("n", [item("r", { maxAttempts: 1 })]);
    const [rd] = await h.dequeue("n", [["r", 1]]);
    await h.settle(h.engine.nack("n", [{ receipt: rd!.receipt, delayMs: null, metadata: null }], h.now));
    w = park(h, [["r", 1]]);
    await h.settle(h.engine.redrive("n", "r", null, h.now));
    expect((await w.promise).deliveries).toHaveLength(1);
    // dependency satisfied
    const [dep] = await h.enqueue("n", [item("x")]);
    const [waiting] = await h.enqueue("n", [item("y", { after: [dep as string] })]);
    expect(h.state("n", waiting as string)).toBe("waiting");
    w = park(h, [["y", 1]]);
    const [dd] = await h.dequeue("n", [["x", 1]]);
    await h.settleAck(h.engine.ack("n", [dd!.receipt], h.now));
    expect((await w.promise).deliveries.map((x) => x.id)).toEqual([waiting as string]);
    h.check();
  });
});

describe("waiters are fair and bounded", () => {
  test("served in arrival order, one item each", async () => {
    const h = new Harness();
    const ws = [park(h, [["t", 1]], { owner: 1 }), park(h, [["t", 1]], { owner: 2 }), park(h, [["t", 1]], { owner: 3 })];
    const ids = await h.enqueue("n", [item("t", { priority: 1 }), item("t", { priority: 2 })]);
    await flush();
    expect(ws[0]!.result?.deliveries[0]?.id).toBe(ids[0] as string);
    expect(ws[1]!.result?.deliveries[0]?.id).toBe(ids[1] as string);
    expect(ws[2]!.result).toBeNull();
    h.engine.cancelWaiters(3);
    expect((await ws[2]!.promise).deliveries).toEqual([]);
  });

  test("a waiter that cannot take the item lets the next one have it", async () => {
    const h = new Harness();
    const plain = park(h, [["t", 1]], { owner: 1 });
    const gpu = park(h, [["t", 1]], { owner: 2, capabilities: { gpu: true } });
    const [id] = await h.enqueue("n", [item("t", { requires: { gpu: true } })]);
    expect((await gpu.promise).deliveries[0]?.id).toBe(id as string);
    await flush();
    expect(plain.result).toBeNull();
    h.engine.releaseWaiters();
    expect((await plain.promise).deliveries).toEqual([]);
  });

  test("times out empty at wait_ms", async () => {
    const h = new Harness();
    const w = park(h, [["t", 1]], { waitMs: 500 });
    expect(h.engine.nextDeadlineMs()).toBe(h.now + 500);
    h.advance(499);
    await flush();
    expect(w.result).toBeNull();
    h.advance(1);
    expect((await w.promise).deliveries).toEqual([]);
    expect(h.engine.nextDeadlineMs()).toBeNull();
  });

  test("per-connection cap: max-1 and max park, max+1 is TOO_LARGE", async () => {
    const h = new Harness({ limits: { waitersPerConnectionMax: 3 } });
    park(h, [["t", 1]], { owner: 1 });
    park(h, [["t", 1]], { owner: 1 });
    park(h, [["t", 1]], { owner: 1 });
    const f = failure(h.engine.dequeue("n", take([["t", 1]], { waitMs: 10, owner: 1 }), h.now));
    expect(f.kind).toBe("over_limit");
    expect(f.message).toContain("waiters_per_connection_max");
    park(h, [["t", 1]], { owner: 2 });
    h.engine.cancelWaiters(1);
    park(h, [["t", 1]], { owner: 1 });
    h.engine.releaseWaiters();
  });

  test("total cap: UNAVAILABLE with retryAfterMs", async () => {
    const h = new Harness({ limits: { waitersTotalMax: 2 } });
    park(h, [["t", 1]], { owner: 1 });
    park(h, [["t", 1]], { owner: 2 });
    const f = failure(h.engine.dequeue("n", take([["t", 1]], { waitMs: 10, owner: 3 }), h.now));
    expect(f.kind).toBe("server_full");
    expect(f.retryAfterMs).toBeGreaterThan(0);
    h.engine.releaseWaiters();
    expect((h.engine.stats(null, h.now) as any).totals.parkedWaiters).toBe(0);
  });

  test("a dequeue that finds items returns at once even with wait_ms", async () => {
    const h = new Harness();
    await h.enqueue("n", [item("t")]);
    const outcome = dequeued(h.engine.dequeue("n", take([["t", 5]], { waitMs: 1000 }), h.now));
    expect(outcome.kind).toBe("done");
  });
});
