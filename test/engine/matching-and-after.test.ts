// Goal: the engine's use of matching (requires validated at enqueue, workers
// take only what they satisfy, no capabilities = only items without requires)
// and of `after` dependencies (NOT_FOUND, waiting until acked, dead letters
// when a dependency fails, rebuilt after a restart).

import { describe, expect, test } from "bun:test";
import { Harness, failure, item, unwrap } from "./support/harness.ts";

describe("matching", () => {
  test("workers take only items they satisfy, best first among those", async () => {
    const h = new Harness();
    const [plain, gpu, big] = await h.enqueue("n", [
      item("t", { priority: 5 }),
      item("t", { priority: 1, requires: { gpu: true } }),
      item("t", { priority: 0, requires: { mem: { gte: 64 } } }),
    ]);
    expect((await h.dequeue("n", [["t", 5]])).map((d) => d.id)).toEqual([plain as string]);
    expect((await h.dequeue("n", [["t", 5]], { capabilities: { gpu: true, mem: 16 } })).map((d) => d.id)).toEqual([gpu as string]);
    expect((await h.dequeue("n", [["t", 5]], { capabilities: { mem: 128 } })).map((d) => d.id)).toEqual([big as string]);
    h.check();
  });

  test("a bad requires is BAD_REQUEST at that item's requires, naming the feature and operator; nothing is stored", async () => {
    const h = new Harness();
    const f = failure(h.engine.enqueue("n", [item("t"), item("t", { requires: { gpu: { bogus: 1 } } })], h.now));
    expect(f.kind).toBe("invalid_value");
    expect(f.at).toEqual({ kind: "item", index: 1, part: { of: "requires", at: { feature: "gpu", operator: "bogus", position: null } } });
    expect(h.engine.topics("n", { prefix: null, limit: 10, after: null }).topics).toEqual([]);
  });

  test("bad capabilities are BAD_REQUEST", async () => {
    const h = new Harness();
    const f = failure(h.engine.dequeue("n", { topics: [{ topic: "t", count: 1 }], capabilities: { x: { y: 1 } }, waitMs: 0, leaseMs: null, owner: 1 }, h.now));
    expect(f.kind).toBe("invalid_value");
    expect(f.at).toEqual({ kind: "capabilities", at: { feature: "x", operator: null, position: null } });
  });
});

describe("after", () => {
  test("unknown or other-namespace ids are NOT_FOUND at that item's position in `after`", async () => {
    const h = new Harness();
    const [other] = await h.enqueue("m", [item("t")]);
    const f = failure(h.engine.enqueue("n", [item("t"), item("t", { after: ["0:12345", other as string] })], h.now));
    expect(f).toMatchObject({ kind: "unknown_dependency", at: { kind: "item", index: 1, part: { of: "after", position: 0 } } });
    const g = failure(h.engine.enqueue("n", [item("t", { after: [other as string] })], h.now));
    expect(g.at).toEqual({ kind: "item", index: 0, part: { of: "after", position: 0 } });
  });

  test("waits until every dependency is acked; an acked id is satisfied at once", async () => {
    const h = new Harness();
    const [a, b] = await h.enqueue("n", [item("dep"), item("dep")]);
    const [w] = await h.enqueue("n", [item("t", { after: [a as string, b as string] })]);
    expect(h.state("n", w as string)).toBe("waiting");
    const ds = await h.dequeue("n", [["dep", 2]]);
    await h.settleAck(h.engine.ack("n", [ds[0]!.receipt], h.now));
    expect(h.state("n", w as string)).toBe("waiting");
    await h.settleAck(h.engine.ack("n", [ds[1]!.receipt], h.now));
    expect(h.state("n", w as string)).toBe("ready");
    const [later] = await h.enqueue("n", [item("t", { after: [a as string] })]);
    expect(h.state("n", later as string)).toBe("ready");
    h.check();
  });

  test("a dependency cancelled, expired or dead makes dependents dead letters, in a chain", async () => {
    const h = new Harness();
    const [a] = await h.enqueue("n", [item("dep")]);
    const [b] = await h.enqueue("n", [item("t", { after: [a as string] })]);
    const [c] = await h.enqueue("n", [item("t", { after: [b as string] })]);
    await h.settle(h.engine.cancel("n", [a as string], h.now));
    expect(unwrap(h.engine.get("n", [b as string, c as string], h.now)).items.map((x) => x && "deadReason" in x ? x.deadReason : null)).toEqual([
      `dependency ${a} cancelled`,
      `dependency ${b} dead`,
    ]);
    // An item naming a dead letter or a cancelled id is dead at once.
    const [d] = await h.enqueue("n", [item("t", { after: [b as string] })]);
    expect(h.state("n", d as string)).toBe("dead");
    const [e] = await h.enqueue("n", [item("t", { after: [a as string] })]);
    expect(h.state("n", e as string)).toBe("dead");
    // Redrive makes it ready; its after list is not waited on again.
    await h.settle(h.engine.redrive("n", "t", [e as string], h.now));
    expect(h.state("n", e as string)).toBe("ready");
    h.check();
  });

  test("the graph is rebuilt after a restart", async () => {
    const h = new Harness();
    const [a] = await h.enqueue("n", [item("dep")]);
    const [w] = await h.enqueue("n", [item("t", { after: [a as string] })]);
    await h.restart();
    expect(h.state("n", w as string)).toBe("waiting");
    const [d] = await h.dequeue("n", [["dep", 1]]);
    await h.settleAck(h.engine.ack("n", [d!.receipt], h.now));
    expect(h.state("n", w as string)).toBe("ready");
    h.check();
  });
});
