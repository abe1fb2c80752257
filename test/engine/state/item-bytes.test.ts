// Goal: payloads and metadata are right wherever they come from. Memory holds
// an item's bytes (and its enqueue instant and `requires` map) only until its
// enqueue commit is durable; after that every delivery, get, dead listing and
// write reads them back from the store, and a nack's new metadata stays in
// memory (the store's copy is older until that write commits). Each case checks the reply and what the store holds, before
// and after a restart, and with commits held so memory and store differ.

import { leaseWriteDelayMs } from "../../../src/limits.ts";
import { describe, expect, test } from "bun:test";
import type { ItemState } from "../../../src/engine/api.ts";
import { dequeued, Harness, item, take, unwrap } from "../support/harness.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array) => new TextDecoder().decode(value);

function getState(h: Harness, ns: string, id: string): ItemState {
  const got = unwrap(h.engine.get(ns, [id], h.now)).items[0];
  if (got === null || got === undefined || got.state === "ended") throw new Error(`no live item ${id}`);
  return got;
}

describe("item bytes: memory until stored, then the store", () => {
  test("an item not yet committed shows its bytes from memory; once committed, from the store", async () => {
    const h = new Harness({ shards: 2 });
    h.store.pauseCommits();
    const reply = unwrap(h.engine.enqueue("n", [item("t", { payload: bytes("p0"), metadata: bytes("m0") })], h.now));
    const id = reply.value.ids[0] as string;
    // The store has nothing yet: get must answer from memory.
    expect(h.store.readItem(0, 0)).toBeNull();
    expect(text(getState(h, "n", id).payload)).toBe("p0");
    expect(text(getState(h, "n", id).metadata)).toBe("m0");
    h.store.resumeCommits();
    await reply.durable;
    expect(text(getState(h, "n", id).payload)).toBe("p0");
    const [delivery] = await h.dequeue("n", [["t", 1]]);
    expect(text(delivery!.payload)).toBe("p0");
    expect(text(delivery!.metadata)).toBe("m0");
    h.check();
  });

  test("deliveries of many items each carry their own payload (reads never share a buffer)", async () => {
    const h = new Harness({ shards: 3 });
    const inputs = Array.from({ length: 50 }, (_, i) => item("t", { payload: bytes(`payload-${i}`), priority: i }));
    await h.enqueue("n", inputs);
    const deliveries = await h.dequeue("n", [["t", 50]]);
    expect(deliveries.map((d) => text(d.payload))).toEqual(inputs.map((_, i) => `payload-${i}`));
    const states = unwrap(h.engine.get("n", deliveries.map((d) => d.id), h.now)).items as ItemState[];
    expect(states.map((s) => text(s.payload))).toEqual(inputs.map((_, i) => `payload-${i}`));
    h.check();
  });

  test("a nack's metadata is delivered next, shown by get, and stored; an empty one replaces too", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = await h.enqueue("n", [item("t", { payload: bytes("p"), metadata: bytes("first") })]);
    const [d1] = await h.dequeue("n", [["t", 1]]);
    // Hold commits: the store still has "first" while memory has the nack's metadata.
    h.store.pauseCommits();
    const nack = unwrap(h.engine.nack("n", [{ receipt: d1!.receipt, delayMs: null, metadata: bytes("second") }], h.now));
    expect(text(getState(h, "n", id as string).metadata)).toBe("second");
    expect(text(h.store.readItem(0, 0)!.metadata)).toBe("first");
    const [d2] = await h.dequeue("n", [["t", 1]]);
    expect(text(d2!.metadata)).toBe("second");
    expect(text(d2!.payload)).toBe("p");
    h.store.resumeCommits();
    await nack.durable;
    await h.writer.drain();
    expect(text(h.store.readItem(0, 0)!.metadata)).toBe("second");
    await h.settle(h.engine.nack("n", [{ receipt: d2!.receipt, delayMs: null, metadata: new Uint8Array(0) }], h.now));
    const [d3] = await h.dequeue("n", [["t", 1]]);
    expect(d3!.metadata.length).toBe(0);
    h.check();
  });

  test("after a restart (recovery loads no bytes) deliveries, get and dead read them from the store", async () => {
    const h = new Harness({ shards: 2 });
    const [a, b] = (await h.enqueue("n", [
      item("t", { payload: bytes("pa"), metadata: bytes("ma") }),
      item("t", { payload: bytes("pb"), metadata: bytes("mb"), maxAttempts: 1 }),
    ])) as [string, string];
    // b dies after its one attempt: a dead letter with its bytes.
    const first = await h.dequeue("n", [["t", 2]]);
    const receiptB = first.find((d) => d.id === b)!.receipt;
    const receiptA = first.find((d) => d.id === a)!.receipt;
    await h.settle(h.engine.nack("n", [{ receipt: receiptB, delayMs: null, metadata: bytes("mb2") }, { receipt: receiptA, delayMs: null, metadata: null }], h.now));
    await h.restart();
    expect(text(getState(h, "n", a as string).payload)).toBe("pa");
    const dead = h.engine.dead("n", "t", 10).items;
    expect(dead.map((s) => [s.id, text(s.payload), text(s.metadata)])).toEqual([[b, "pb", "mb2"]]);
    const [again] = await h.dequeue("n", [["t", 1]]);
    expect([again!.id, text(again!.payload), text(again!.metadata)]).toEqual([a, "pa", "ma"]);
    // A redrive rewrites the dead letter's record with its bytes intact.
    await h.settle(h.engine.redrive("n", "t", null, h.now));
    await h.restart();
    const [redriven] = await h.dequeue("n", [["t", 1]]);
    expect([redriven!.id, text(redriven!.payload), text(redriven!.metadata)]).toEqual([b, "pb", "mb2"]);
    h.check();
  });

  test("a lease's write carries the whole record: a crash after it loses neither payload nor metadata", async () => {
    const h = new Harness({ shards: 1 });
    await h.enqueue("n", [item("t", { payload: bytes("keep"), metadata: bytes("meta") })]);
    dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now));
    h.advance(leaseWriteDelayMs);
    await h.writer.drain();
    const stored = h.store.readItem(0, 0)!;
    expect([stored.state, text(stored.payload), text(stored.metadata)]).toEqual(["leased", "keep", "meta"]);
    h.crash();
    h.advance(60 * 60 * 1000);
    const [d] = await h.dequeue("n", [["t", 1]]);
    expect([text(d!.payload), text(d!.metadata), d!.attempt]).toEqual(["keep", "meta", 2]);
    h.check();
  });

  test("enqueuedAtMs and requires: from memory until the commit, then from the store, through patched and whole-record writes and a restart", async () => {
    const h = new Harness({ shards: 1 });
    const requires = { gpu: "h100", mem_gb: { gte: 8 } };
    h.store.pauseCommits();
    const enqueuedAtMs = h.now;
    const reply = unwrap(h.engine.enqueue("n", [item("t", { requires }), item("t", { requires: {}, priority: 1 })], h.now));
    const [withRequires, emptyRequires] = reply.value.ids as [string, string];
    h.advance(5);
    expect(getState(h, "n", withRequires)).toMatchObject({ requires, enqueuedAtMs });
    h.store.resumeCommits();
    await reply.durable;
    expect(getState(h, "n", withRequires)).toMatchObject({ requires, enqueuedAtMs });
    expect(getState(h, "n", emptyRequires)).toMatchObject({ requires: {}, enqueuedAtMs });
    // A lease's patched write keeps the stored map, `{}` included (memory has no copy to compare).
    const [leased] = await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "h100", mem_gb: 16 } });
    const [plain] = await h.dequeue("n", [["t", 1]]);
    expect([leased!.id, leased!.enqueuedAtMs, plain!.id, plain!.enqueuedAtMs]).toEqual([withRequires, enqueuedAtMs, emptyRequires, enqueuedAtMs]);
    h.advance(leaseWriteDelayMs);
    await h.writer.drain();
    expect(h.store.readItem(0, 0)).toMatchObject({ state: "leased", requires, enqueuedAtMs });
    expect(h.store.readItem(0, 1)).toMatchObject({ state: "leased", requires: {}, enqueuedAtMs });
    // A nack with metadata writes the whole record: requires and enqueuedAtMs come from the store.
    await h.settle(h.engine.nack("n", [{ receipt: leased!.receipt, delayMs: null, metadata: bytes("m") }], h.now));
    await h.writer.drain();
    expect(h.store.readItem(0, 0)).toMatchObject({ state: "pending", requires, enqueuedAtMs });
    await h.restart();
    expect(getState(h, "n", withRequires)).toMatchObject({ requires, enqueuedAtMs });
    expect(getState(h, "n", emptyRequires)).toMatchObject({ requires: {}, enqueuedAtMs });
    const [again] = await h.dequeue("n", [["t", 1]], { capabilities: { gpu: "h100", mem_gb: 16 } });
    expect([again!.id, again!.enqueuedAtMs, text(again!.metadata)]).toEqual([withRequires, enqueuedAtMs, "m"]);
    h.check();
  });
});
