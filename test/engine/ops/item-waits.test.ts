// Goal: a `wait` answers at once when nothing it names is live (or wait_ms
// is 0), and otherwise parks until every named live item has ended — by ack
// (with its result), cancel, TTL or an at_most_once lease expiry — answering
// only once that end is durable, with each item's state then; it times out
// with the states as they are, wakes only on its own items, is dropped with
// its connection, answered at shutdown, and bounded per connection and in
// total.

import { describe, expect, test } from "bun:test";
import type { EndedItemState, ItemState, WaitOutcome } from "../../../src/engine/api.ts";
import { Harness, failure, item } from "../support/harness.ts";

type States = Array<ItemState | EndedItemState | null>;

const flush = () => new Promise((r) => setImmediate(r));

function park(h: Harness, ids: string[], waitMs = 10_000, owner = 1) {
  const outcome = h.engine.wait("n", ids, waitMs, owner, h.now);
  if (!outcome.ok || outcome.kind !== "parked") throw new Error(`expected parked, got ${JSON.stringify(outcome)}`);
  let result: States | null = null;
  outcome.waiter.then((r) => {
    result = r;
  });
  return {
    get result(): States | null {
      return result;
    },
  };
}

function done(outcome: WaitOutcome): States {
  if (!outcome.ok || outcome.kind !== "done") throw new Error("expected an answer now");
  return outcome.items;
}

function parked(h: Harness): number {
  return h.engine.stats(null, h.now).engine!.itemWaitsParked;
}

describe("wait answers now", () => {
  test("when every id is ended, unknown, malformed or of another namespace, or wait_ms is 0", async () => {
    const h = new Harness();
    const [live, gone] = await h.enqueue("n", [item("t"), item("t")]);
    const [other] = await h.enqueue("m", [item("t")]);
    await h.settle(h.engine.cancel("n", [gone!], h.now));
    expect(done(h.engine.wait("n", [gone!, "0:999999", "nonsense", other!], 10_000, 1, h.now))).toEqual([
      { id: gone!, state: "ended", outcome: "cancelled" },
      null,
      null,
      null,
    ]);
    expect(done(h.engine.wait("n", [live!], 0, 1, h.now))).toMatchObject([{ id: live!, state: "ready" }]);
    expect(parked(h)).toBe(0);
    h.check();
  });
});

describe("a parked wait wakes", () => {
  test("when its last live item is acked, after the ack is durable, with the result", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("t"), item("t")]);
    const w = park(h, [a!, b!, "0:999999"]);
    expect(parked(h)).toBe(1);
    const [da, db] = await h.dequeue("n", [["t", 2]]);
    await h.settleAck(h.engine.ack("n", [da!.receipt], h.now));
    await flush();
    expect(w.result).toBeNull();
    h.check();
    // Held commits: the ack is not durable yet, so the wait does not answer.
    h.store.pauseCommits();
    const ack = h.engine.ack("n", [db!.receipt], h.now, [Uint8Array.of(42)]);
    await flush();
    expect(w.result).toBeNull();
    h.store.resumeCommits();
    await h.settleAck(ack);
    await flush();
    expect(w.result).toEqual([
      { id: a!, state: "ended", outcome: "acked" },
      { id: b!, state: "ended", outcome: "acked", result: Uint8Array.of(42) },
      null,
    ]);
    expect(parked(h)).toBe(0);
    expect(h.engine.stats(null, h.now).engine!.itemWaitsAnsweredTotal).toBe(1);
    h.check();
  });

  test("on cancel, TTL and an at_most_once lease expiry", async () => {
    const h = new Harness();
    const [c, ttl, amo] = await h.enqueue("n", [item("c"), item("t", { ttlMs: 1000 }), item("a", { delivery: "at_most_once", leaseMs: 500 })]);
    const wc = park(h, [c!]);
    const wt = park(h, [ttl!]);
    const wa = park(h, [amo!]);
    await h.settle(h.engine.cancel("n", [c!], h.now));
    await flush();
    expect(wc.result).toEqual([{ id: c!, state: "ended", outcome: "cancelled" }]);
    await h.dequeue("n", [["a", 1]]);
    h.advance(500);
    await h.writer.drain();
    await flush();
    expect(wa.result).toEqual([{ id: amo!, state: "ended", outcome: "expired" }]);
    expect(wt.result).toBeNull();
    h.advance(500);
    await h.writer.drain();
    await flush();
    expect(wt.result).toEqual([{ id: ttl!, state: "ended", outcome: "expired" }]);
    h.check();
  });

  test("only on its own items: another wait stays parked; two waits on one item both wake", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("t"), item("t")]);
    const w1 = park(h, [a!]);
    const w2 = park(h, [a!, a!]);
    const w3 = park(h, [b!]);
    await h.settle(h.engine.cancel("n", [a!], h.now));
    await flush();
    expect(w1.result).toHaveLength(1);
    expect(w2.result).toHaveLength(2);
    expect(w3.result).toBeNull();
    expect(parked(h)).toBe(1);
    h.check();
  });
});

describe("a parked wait ends otherwise", () => {
  test("wait_ms runs out: the states as they are then", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("t"), item("t")]);
    const w = park(h, [a!, b!], 1000);
    await h.settle(h.engine.cancel("n", [a!], h.now));
    await h.dequeue("n", [["t", 1]]);
    h.advance(999);
    await flush();
    expect(w.result).toBeNull();
    h.advance(1);
    await flush();
    expect(w.result).toMatchObject([{ id: a!, state: "ended", outcome: "cancelled" }, { id: b!, state: "leased" }]);
    expect(parked(h)).toBe(0);
    h.check();
  });

  test("its connection closes (dropped) or the server shuts down (answered with what it has)", async () => {
    const h = new Harness();
    const [a] = await h.enqueue("n", [item("t")]);
    const mine = park(h, [a!], 10_000, 1);
    const theirs = park(h, [a!], 10_000, 2);
    h.engine.cancelWaiters(1);
    expect(parked(h)).toBe(1);
    h.check();
    h.engine.releaseWaiters();
    await flush();
    expect(theirs.result).toMatchObject([{ id: a!, state: "ready" }]);
    expect(parked(h)).toBe(0);
    // The dropped wait's answer goes nowhere; it is not left parked.
    expect(mine.result).not.toBeNull();
    h.check();
  });
});

describe("bounds", () => {
  test("per connection (over_limit) and in total (server_full), at limit - 1, limit and limit + 1", async () => {
    const h = new Harness({ limits: { itemWaitsPerConnectionMax: 2, itemWaitsTotalMax: 3 } });
    const [a] = await h.enqueue("n", [item("t")]);
    park(h, [a!], 10_000, 1);
    park(h, [a!], 10_000, 1);
    expect(failure(h.engine.wait("n", [a!], 10_000, 1, h.now))).toMatchObject({ kind: "over_limit", at: { kind: "wait" } });
    park(h, [a!], 10_000, 2);
    expect(failure(h.engine.wait("n", [a!], 10_000, 3, h.now))).toMatchObject({ kind: "server_full" });
    // A wait that would answer now is never refused.
    expect(done(h.engine.wait("n", [a!], 0, 1, h.now))).toHaveLength(1);
    expect(parked(h)).toBe(3);
    h.check();
  });
});
