// Goal: the by-id ops and ordered looks (engine/ops/item-ops.ts) and nack with a
// priority: each changes what it says, keeps every index consistent, and what
// it wrote survives a restart (a new priority included).

import { describe, expect, test } from "bun:test";
import { Harness, item } from "../support/harness.ts";

describe("take", () => {
  test("leases a ready, a delayed and a dead item by id; a leased one answers null", async () => {
    const h = new Harness();
    const [ready, delayed, dying] = await h.enqueue("n", [item("t"), item("t", { delayMs: 60_000 }), item("t", { maxAttempts: 1 })]);
    const [first] = await h.dequeue("n", [["t", 1]]);
    expect(first!.id).toBe(ready!);
    await h.settle(h.engine.nack("n", [{ receipt: first!.receipt, delayMs: null, metadata: null }], h.now));
    const byDequeue = await h.dequeue("n", [["t", 2]]);
    expect(byDequeue.map((d) => d.id)).toEqual([ready!, dying!]);
    await h.settle(h.engine.nack("n", [{ receipt: byDequeue[1]!.receipt, delayMs: null, metadata: null }], h.now));
    expect(h.state("n", dying!)).toBe("dead");
    expect((await h.settle(h.engine.take("n", ready!, null, h.now))).delivery).toBeNull();
    const d1 = (await h.settle(h.engine.take("n", delayed!, 5000, h.now))).delivery!;
    expect(d1.id).toBe(delayed!);
    expect(d1.leaseExpiresAtMs).toBe(h.now + 5000);
    const d2 = (await h.settle(h.engine.take("n", dying!, null, h.now))).delivery!;
    expect(d2.id).toBe(dying!);
    expect(h.state("n", dying!)).toBe("leased");
    expect(h.engine.inspect("n", dying!, h.now)?.deadReason).toBeUndefined();
    expect((await h.settle(h.engine.take("m", delayed!, null, h.now))).delivery).toBeNull();
    h.check();
    await h.restart();
    expect(h.state("n", delayed!)).toBe("leased");
    h.check();
  });
});

describe("deadLetter and nack with a priority", () => {
  test("a new priority orders the item and survives a restart", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("t", { priority: 5 }), item("t", { priority: 6 })]);
    const [da] = await h.dequeue("n", [["t", 1]]);
    await h.settle(h.engine.nack("n", [{ receipt: da!.receipt, delayMs: null, metadata: null, priority: 9 }], h.now));
    expect(h.engine.firstIds("n", "t", "ready", 5)).toEqual([b!]);
    const [db] = await h.dequeue("n", [["t", 1]]);
    expect(db!.id).toBe(b!);
    const dead = await h.settle(h.engine.deadLetter("n", [{ receipt: db!.receipt, priority: 1, reason: "buried" }, { receipt: "0:0:1:1", priority: null, reason: "x" }], h.now));
    expect(dead).toEqual({ dead: 1, stale: ["0:0:1:1"] });
    const shown = h.engine.inspect("n", b!, h.now)!;
    expect([shown.state, shown.priority, shown.deadReason, shown.deliveries]).toEqual(["dead", 1, "buried", 1]);
    // Lease and write again after the priority change: the later write keeps the new priority.
    const [again] = await h.dequeue("n", [["t", 1]]);
    expect([again!.id, again!.priority]).toEqual([a!, 9]);
    await h.restart();
    expect(h.engine.inspect("n", a!, h.now)!.priority).toBe(9);
    expect(h.engine.inspect("n", b!, h.now)!.priority).toBe(1);
    expect(h.engine.firstIds("n", "t", "dead", 10)).toEqual([b!]);
    h.check();
  });
});

describe("deliverNow, firstIds and countReadyBelow", () => {
  test("delayed items in due order, moved to ready now; counts below a priority", async () => {
    const h = new Harness();
    const [late, soon, ready] = await h.enqueue("n", [item("t", { delayMs: 9000 }), item("t", { delayMs: 1000 }), item("t", { priority: 2000 })]);
    await h.enqueue("n", [item("u", { priority: 3 })]);
    expect(h.engine.firstIds("n", "t", "delayed", 10)).toEqual([soon!, late!]);
    expect(h.engine.firstIds("n", "t", "delayed", 1)).toEqual([soon!]);
    expect(h.engine.firstIds("n", "nope", "delayed", 1)).toEqual([]);
    expect(h.engine.countReadyBelow("n", "t", 1024)).toBe(0);
    expect(h.engine.countReadyBelow("n", null, 1024)).toBe(1);
    const moved = await h.settle(h.engine.deliverNow("n", [late!, ready!, "9:9"], h.now));
    expect(moved).toEqual({ moved: 1, missing: [ready!, "9:9"] });
    expect(h.state("n", late!)).toBe("ready");
    expect(h.engine.countReadyBelow("n", "t", 1024)).toBe(1);
    expect(h.engine.firstIds("n", "t", "ready", 1)).toEqual([late!]);
    h.check();
    await h.restart();
    expect(h.state("n", late!)).toBe("ready");
    expect(h.state("n", soon!)).toBe("delayed");
  });
});
