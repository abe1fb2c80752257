// Goal: `list` in the engine: ready items in delivery order (across signature
// groups and shards), the others in enqueue order, each state filter, paging
// with `next` at limit-1, limit and limit+1, paging that stays exact while
// other items come and go, short pages when the slot budget runs out, a paused
// topic's ready items, and heaps left intact (invariants) by the walk.

import { describe, expect, test } from "bun:test";
import type { EnqueueItemInput, ItemState, ListCursor, LiveStateName } from "../../../src/engine/api.ts";
import { Harness, item, unwrap } from "../support/harness.ts";

function page(h: Harness, topic: string, state: LiveStateName | null, limit: number, after: ListCursor | null = null) {
  return h.engine.list("n", topic, { state, limit, after }, h.now);
}

/** Every item of the listing, following `next` (bounded by `pagesMax`). */
function listAll(h: Harness, topic: string, state: LiveStateName | null, limit: number, pagesMax = 10_000): ItemState[] {
  const out: ItemState[] = [];
  let after: ListCursor | null = null;
  for (let pages = 0; pages < pagesMax; pages++) {
    const p = page(h, topic, state, limit, after);
    out.push(...p.items);
    if (p.next === null) return out;
    after = p.next;
  }
  throw new Error("listing did not end");
}

describe("list", () => {
  test("an unknown topic or namespace lists nothing", () => {
    const h = new Harness();
    expect(page(h, "nope", null, 10)).toEqual({ items: [], next: null });
    expect(h.engine.list("other", "nope", { state: "ready", limit: 10, after: null }, h.now)).toEqual({ items: [], next: null });
  });

  test("ready items come in delivery order across groups and shards: priority, deliver_at_ms, enqueue order", async () => {
    const h = new Harness({ shards: 4 });
    const inputs: EnqueueItemInput[] = [];
    for (let i = 0; i < 60; i++) {
      inputs.push(item("t", { priority: (i * 7) % 5, deliverAtMs: h.now - (i % 3), requires: i % 4 === 0 ? { gpu: true } : null }));
    }
    const ids = await h.enqueue("n", inputs);
    const expected = ids
      .map((id, i) => ({ id, priority: inputs[i]!.priority, at: inputs[i]!.deliverAtMs!, order: i }))
      .sort((a, b) => a.priority - b.priority || a.at - b.at || a.order - b.order)
      .map((e) => e.id);
    for (const limit of [1, 7, 59, 60, 61]) {
      expect(listAll(h, "t", "ready", limit).map((s) => s.id)).toEqual(expected);
      h.check();
    }
    // The order dequeue follows is the listed one.
    const delivered = await h.dequeue("n", [["t", 60]], { capabilities: { gpu: true } });
    expect(delivered.map((d) => d.id)).toEqual(expected);
  });

  test("the others come in enqueue order, each state alone or all together after the ready ones", async () => {
    const h = new Harness({ shards: 3 });
    const ids = await h.enqueue("n", [
      item("t"), // ready
      item("t", { delayMs: 1000 }), // delayed
      item("t", { maxAttempts: 1 }), // leased, then dead
      item("t"), // leased
      item("t", { delayMs: 500 }), // delayed
      item("u"), // another topic
    ]);
    const [waitingId] = await h.enqueue("n", [item("t", { after: [ids[5]!] })]);
    const leased = await h.dequeue("n", [["t", 3]]);
    expect(leased.map((d) => d.id)).toEqual([ids[0]!, ids[2]!, ids[3]!]);
    await h.settle(h.engine.nack("n", [{ receipt: leased[1]!.receipt, delayMs: null, metadata: null }], h.now));
    await h.settle(h.engine.nack("n", [{ receipt: leased[0]!.receipt, delayMs: null, metadata: null }], h.now));
    const byState = (state: LiveStateName) => listAll(h, "t", state, 2).map((s) => s.id);
    expect(byState("ready")).toEqual([ids[0]!]);
    expect(byState("delayed")).toEqual([ids[1]!, ids[4]!]);
    expect(byState("leased")).toEqual([ids[3]!]);
    expect(byState("dead")).toEqual([ids[2]!]);
    expect(byState("waiting")).toEqual([waitingId!]);
    const all = listAll(h, "t", null, 2);
    expect(all.map((s) => s.id)).toEqual([ids[0]!, ids[1]!, ids[2]!, ids[3]!, ids[4]!, waitingId!]);
    expect(all.map((s) => s.state)).toEqual(["ready", "delayed", "dead", "leased", "delayed", "waiting"]);
    // Item states as `get` shows them.
    expect(all[2]!.deadReason).toBe("max_attempts");
    expect(all[3]!.leaseExpiresAtMs).toBe(leased[2]!.leaseExpiresAtMs);
    expect(all).toEqual(unwrap(h.engine.get("n", all.map((s) => s.id), h.now)).items as ItemState[]);
  });

  test("limit-1, limit and limit+1 items: next only while more follow", async () => {
    const h = new Harness();
    await h.enqueue("n", Array.from({ length: 5 }, () => item("t")));
    await h.enqueue("n", Array.from({ length: 5 }, () => item("d", { delayMs: 10 })));
    for (const [topic, state] of [["t", "ready"], ["d", "delayed"], ["t", null], ["d", null]] as const) {
      expect(page(h, topic, state, 6).next).toBeNull();
      expect(page(h, topic, state, 5).next).toBeNull();
      const short = page(h, topic, state, 4);
      expect(short.items).toHaveLength(4);
      expect(short.next).not.toBeNull();
      const rest = page(h, topic, state, 4, short.next);
      expect(rest.items).toHaveLength(1);
      expect(rest.next).toBeNull();
    }
  });

  test("without a state the page fills from the ready items, then the others", async () => {
    const h = new Harness();
    const ready = await h.enqueue("n", [item("t"), item("t")]);
    const delayed = await h.enqueue("n", [item("t", { delayMs: 10 }), item("t", { delayMs: 10 })]);
    const first = page(h, "t", null, 3);
    expect(first.items.map((s) => s.id)).toEqual([...ready, delayed[0]!]);
    expect(first.next?.phase).toBe("enqueued");
    const exact = page(h, "t", null, 2);
    expect(exact.items.map((s) => s.id)).toEqual(ready);
    expect(exact.next).toEqual({ phase: "enqueued", key: -1 });
    expect(page(h, "t", null, 2, exact.next).items.map((s) => s.id)).toEqual(delayed);
  });

  test("paging stays exact while other items come and go: each item that keeps its state is listed once, in order", async () => {
    const h = new Harness({ shards: 4 });
    const ids = await h.enqueue("n", Array.from({ length: 40 }, (_, i) => item("t", { priority: i % 4 })));
    const seen: string[] = [];
    let after: ListCursor | null = null;
    const removed = new Set<string>();
    for (let round = 0; round < 100; round++) {
      const p = page(h, "t", "ready", 5, after);
      seen.push(...p.items.map((s) => s.id));
      if (p.next === null) break;
      after = p.next;
      // Churn between pages: new items (before and after the cursor) and a cancel.
      await h.enqueue("n", [item("t", { priority: -1 }), item("t", { priority: 9 })]);
      const victim = ids[(round * 7 + 3) % ids.length]!;
      if (!seen.includes(victim) && !removed.has(victim)) {
        await h.settle(h.engine.cancel("n", [victim], h.now));
        removed.add(victim);
      }
      h.check();
    }
    expect(new Set(seen).size).toBe(seen.length);
    const kept = ids.filter((id) => !removed.has(id));
    for (const id of kept) expect(seen).toContain(id);
    // Items enqueued between pages behind the cursor (priority 9) are listed too, in order.
    const states = unwrap(h.engine.get("n", seen, h.now)).items as ItemState[];
    for (let i = 1; i < states.length; i++) {
      const a = states[i - 1]!;
      const b = states[i]!;
      expect(a.priority < b.priority || (a.priority === b.priority && a.enqueuedAtMs <= b.enqueuedAtMs)).toBe(true);
    }
  });

  test("a paused topic lists its ready items as ready, in the order they will go", async () => {
    const h = new Harness();
    const ids = await h.enqueue("n", [item("t", { priority: 2 }), item("t", { priority: 1 })]);
    await h.settle(h.engine.pause("n", "t", null, h.now));
    expect(page(h, "t", "ready", 10).items.map((s) => s.id)).toEqual([ids[1]!, ids[0]!]);
  });

  test("with a small slot budget a page may come back short, and following next still lists everything once", async () => {
    const h = new Harness({ shards: 2, limits: { listScanSlotsMax: 4 } });
    const mine: string[] = [];
    for (let i = 0; i < 30; i++) {
      const [other] = await h.enqueue("n", [item("noise", { delayMs: 10 }), item("noise", { delayMs: 10 })]);
      expect(other).toBeDefined();
      if (i % 3 === 0) mine.push(...(await h.enqueue("n", [item("t", { delayMs: 10 })])));
    }
    let pages = 0;
    let short = 0;
    const seen: string[] = [];
    let after: ListCursor | null = null;
    for (;;) {
      const p = page(h, "t", "delayed", 3, after);
      pages++;
      if (p.items.length < 3 && p.next !== null) short++;
      seen.push(...p.items.map((s) => s.id));
      if (p.next === null) break;
      after = p.next;
    }
    expect(seen).toEqual(mine);
    expect(short).toBeGreaterThan(0);
    expect(pages).toBeLessThan(200);
  });

  test("a heap whose root gathered many children is walked in order, and still pops in order after", async () => {
    const h = new Harness({ shards: 1 });
    // Rising priorities: each insert becomes a child of the root (500 children).
    const rising = await h.enqueue("n", Array.from({ length: 500 }, (_, i) => item("t", { priority: i })));
    // Falling ones: each insert becomes the new root.
    const falling = await h.enqueue("n", Array.from({ length: 50 }, (_, i) => item("t", { priority: -1 - i })));
    const expected = [...[...falling].reverse(), ...rising];
    const first = page(h, "t", "ready", 60);
    expect(first.items.map((s) => s.id)).toEqual(expected.slice(0, 60));
    h.check();
    expect(listAll(h, "t", "ready", 100).map((s) => s.id)).toEqual(expected);
    h.check();
    expect((await h.dequeue("n", [["t", 1000]])).map((d) => d.id)).toEqual(expected);
  });

  test("deep pages found by one pass over the item table equal the walk's, at visit limit-1, limit and limit+1", async () => {
    const h = new Harness({ shards: 3 });
    const ids = await h.enqueue("n", Array.from({ length: 40 }, (_, i) => item("t", { priority: (i * 13) % 7, requires: i % 5 === 0 ? { gpu: true } : null })));
    await h.enqueue("n", [item("other"), item("t", { delayMs: 10 })]);
    const expected = listAll(h, "t", "ready", 40).map((s) => s.id);
    expect([...expected].sort()).toEqual([...ids].sort());
    for (const visitsMax of [0, 1, 9, 10, 11, 1000]) {
      const deep = new Harness({ shards: 3, limits: { listReadyVisitsMax: visitsMax } });
      await deep.enqueue("n", Array.from({ length: 40 }, (_, i) => item("t", { priority: (i * 13) % 7, requires: i % 5 === 0 ? { gpu: true } : null })));
      await deep.enqueue("n", [item("other"), item("t", { delayMs: 10 })]);
      for (const limit of [1, 10, 39, 40]) {
        expect(listAll(deep, "t", "ready", limit).map((s) => s.id.replace(/^\d+:/, ""))).toEqual(expected.map((id) => id.replace(/^\d+:/, "")));
      }
      expect(listAll(deep, "t", null, 7).length).toBe(41);
      deep.check();
    }
  });
});
