// Goal: the contract's virtual-time rotation between groups, group bounds
// (max_leased, rate) and group pauses, in the engine on a ManualClock.

import { describe, expect, test } from "bun:test";
import { dequeued, Harness, item, take, unwrap } from "../support/harness.ts";

function grouped(topic: string, group: string | null, priority = 0) {
  return { ...item(topic, { priority }), group };
}

async function groupsOf(h: Harness, count: number): Promise<Array<string | null>> {
  const out: Array<string | null> = [];
  for (let i = 0; i < count; i++) {
    const [d] = await h.dequeue("n", [["t", 1]]);
    if (d === undefined) break;
    out.push(d.group ?? null);
  }
  return out;
}

describe("group rotation", () => {
  test("backlogged groups alternate; ties go to the group whose best item came first", async () => {
    const h = new Harness();
    await h.enqueue("n", [grouped("t", "a"), grouped("t", "a"), grouped("t", "a"), grouped("t", "b"), grouped("t", "b")]);
    expect(await groupsOf(h, 5)).toEqual(["a", "b", "a", "b", "a"]);
    h.check();
  });

  test("priority comes first, then the rotation", async () => {
    const h = new Harness();
    await h.enqueue("n", [grouped("t", "a", 5), grouped("t", "a", 5), grouped("t", "b", 1), grouped("t", "b", 5)]);
    // b's priority-1 item first (v(b) = 1); at priority 5, a (v 0), then a tie at 1 that a's earlier item wins, then b.
    expect(await groupsOf(h, 4)).toEqual(["b", "a", "a", "b"]);
    h.check();
  });

  test("weights share deliveries in proportion", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: "a", weight: 3, maxLeased: null, rate: null, clear: false }, h.now));
    const items = [];
    for (let i = 0; i < 12; i++) items.push(grouped("t", "a"), grouped("t", "b"));
    await h.enqueue("n", items);
    const got = await groupsOf(h, 8);
    expect(got.filter((g) => g === "a")).toHaveLength(6);
    h.check();
  });

  test("a group that joins late starts at the least v: it neither banks credit nor starts behind", async () => {
    const h = new Harness();
    await h.enqueue("n", [grouped("t", "a"), grouped("t", "a"), grouped("t", "a"), grouped("t", "a"), grouped("t", "a")]);
    expect(await groupsOf(h, 2)).toEqual(["a", "a"]);
    await h.enqueue("n", [grouped("t", "b"), grouped("t", "b")]);
    // v(a) = 2, v(b) = max(0, 2) = 2: a tie, a's best item came first.
    expect(await groupsOf(h, 5)).toEqual(["a", "b", "a", "b", "a"]);
    h.check();
  });

  test("items without a group form the nil group", async () => {
    const h = new Harness();
    await h.enqueue("n", [grouped("t", null), grouped("t", null), grouped("t", "a"), grouped("t", "a")]);
    expect(await groupsOf(h, 4)).toEqual([null, "a", null, "a"]);
    h.check();
  });

  test("a group's max_leased passes its items over; an ack lets the next through", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: "*", weight: null, maxLeased: 1, rate: null, clear: false }, h.now));
    const ids = await h.enqueue("n", [grouped("t", "a"), grouped("t", "a"), grouped("t", "b")]);
    const first = await h.dequeue("n", [["t", 10]]);
    expect(first.map((d) => d.group)).toEqual(["a", "b"]);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(0);
    const explained = unwrap(h.engine.explain("n", [ids[1] as string], h.now));
    expect(explained.items[0]?.reasons[0]).toMatchObject({ reason: "group_max_leased", leased: 1, max: 1 });
    await h.settleAck(h.engine.ack("n", [first[0]!.receipt], h.now));
    expect((await h.dequeue("n", [["t", 10]])).map((d) => d.group)).toEqual(["a"]);
    h.check();
  });

  test("a group's rate holds it until its next token; other groups go on", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: "a", weight: null, maxLeased: null, rate: { count: 1, perMs: 1000 }, clear: false }, h.now));
    await h.enqueue("n", [grouped("t", "a"), grouped("t", "a"), grouped("t", "b"), grouped("t", "b")]);
    expect((await h.dequeue("n", [["t", 10]])).map((d) => d.group)).toEqual(["a", "b", "b"]);
    h.advance(999);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(0);
    h.advance(1);
    expect((await h.dequeue("n", [["t", 10]])).map((d) => d.group)).toEqual(["a"]);
    h.check();
  });

  test("a rate of several tokens lets a burst of that many through, then one per refill", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: "a", weight: null, maxLeased: null, rate: { count: 4, perMs: 60_000 }, clear: false }, h.now));
    const items = [];
    for (let i = 0; i < 8; i++) items.push(grouped("t", "a"));
    await h.enqueue("n", items);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(4);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(0);
    h.advance(15_000);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(1);
    h.check();
  });

  test("a topic's own rate and max_leased bound the whole topic", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: null, weight: null, maxLeased: 3, rate: { count: 2, perMs: 1000 }, clear: false }, h.now));
    const items = [];
    for (let i = 0; i < 6; i++) items.push(grouped("t", i % 2 === 0 ? "a" : null));
    await h.enqueue("n", items);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(2);
    h.advance(1000);
    // Tokens for two more, but max_leased 3 lets one through.
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(1);
    h.check();
  });

  test("a parked dequeue is served by a grouped item's enqueue, and by a group's max_leased freeing a slot", async () => {
    const h = new Harness();
    const outcome = dequeued(h.engine.dequeue("n", take([["t", 1]], { waitMs: 5000 }), h.now));
    if (outcome.kind !== "parked") throw new Error("expected a parked dequeue");
    await h.enqueue("n", [grouped("t", "a"), grouped("t", "a")]);
    const first = (await outcome.waiter).deliveries;
    expect(first.map((d) => d.group)).toEqual(["a"]);
    await h.settle(h.engine.policy("n", { topic: "t", group: "a", weight: null, maxLeased: 1, rate: null, clear: false }, h.now));
    const second = dequeued(h.engine.dequeue("n", take([["t", 1]], { waitMs: 5000 }), h.now));
    if (second.kind !== "parked") throw new Error("expected the second dequeue to park behind max_leased");
    await h.settleAck(h.engine.ack("n", [first[0]!.receipt], h.now));
    expect((await second.waiter).deliveries.map((d) => d.group)).toEqual(["a"]);
    h.check();
  });

  test("a rate read back at a restart starts empty: no burst past it across the restart", async () => {
    const h = new Harness();
    await h.settle(h.engine.policy("n", { topic: "t", group: "a", weight: null, maxLeased: null, rate: { count: 2, perMs: 1000 }, clear: false }, h.now));
    const items = [];
    for (let i = 0; i < 6; i++) items.push(grouped("t", "a"));
    await h.enqueue("n", items);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(2);
    await h.restart();
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(0);
    h.advance(500);
    expect(await h.dequeue("n", [["t", 10]])).toHaveLength(1);
    h.check();
  });

  test("a paused group holds back only its items", async () => {
    const h = new Harness();
    await h.enqueue("n", [grouped("t", "a"), grouped("t", "b")]);
    await h.settle(h.engine.pause("n", "t", null, h.now, "a"));
    expect((await h.dequeue("n", [["t", 10]])).map((d) => d.group)).toEqual(["b"]);
    const page = h.engine.groups("n", "t", { limit: 10, after: null });
    expect(page.groups.find((g) => g.group === "a")).toMatchObject({ ready: 1, paused: true });
    await h.settle(h.engine.resume("n", "t", h.now, "a"));
    expect((await h.dequeue("n", [["t", 10]])).map((d) => d.group)).toEqual(["a"]);
    h.check();
  });
});
