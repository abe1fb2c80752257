// Goal: `--store memory`'s writer (memory-writer.ts). A write set's item
// writes reach the MemoryStore as they are made and its commit has landed
// when it closes (a listener is told at once, with no turn of the event
// loop); outcomes, acked-log entries, pauses and policies are dropped. Under
// the real engine, enqueue, dequeue and ack answer settled, payloads are
// delivered from the store, an at_least_once lease is never written (the
// stored value stays as the enqueue wrote it, where the GroupCommitter writes
// the lease leaseWriteDelayMs later), and an acked item leaves the store. A
// delivery reads the store's own value (no copy) and must leave it as it
// was; an at_most_once lease and a nack still write their patched copies.

import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits, leaseWriteDelayMs } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { MemoryWriter } from "../../src/storage/memory/memory-writer.ts";
import type { Writer } from "../../src/storage/writer.ts";
import { ackDone, dequeued, item, take, unwrap } from "../engine/support/harness.ts";
import { itemRecord, outcomeRecord } from "./record-fixtures.ts";

const startMs = 1_700_000_000_000;

function open(store: MemoryStore, writer: Writer, clock: ManualClock): Engine {
  return Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
}

describe("MemoryWriter", () => {
  test("item writes reach the store at once, the commit has landed at close, and what only recovery reads is dropped", async () => {
    const store = new MemoryStore({ shards: 2 });
    const writer = new MemoryWriter(store);
    expect(writer.volatile).toBe(true);
    const first = writer.nextKey();
    expect(writer.nextKey()).toBe(first + 1);

    const set = writer.begin();
    set.putItem(1, first, itemRecord({ ns: "n", topic: "t", payload: new Uint8Array([5]) }));
    expect(store.readItem(1, first)?.payload).toEqual(new Uint8Array([5]));
    set.putOutcome("x", outcomeRecord({ ns: "n", outcome: "cancelled" }));
    set.ackItem("n", 0, 99, startMs);
    set.putPause({ ns: "n", topic: "t", group: null, untilMs: null });
    const generation = writer.commitGeneration;
    const commit = set.close();
    expect(writer.commitGeneration).toBe(generation + 2);
    let committed = false;
    commit.listen({ committed: () => (committed = true), failed: () => {} });
    expect(committed).toBe(true);
    await commit.promise();
    expect([...store.loadOutcomes()]).toEqual([]);
    expect([...store.loadAckedLog()]).toEqual([]);
    expect([...store.loadPauses()]).toEqual([]);

    const value = store.readItemBytes(1, first) as Uint8Array;
    const next = writer.begin();
    next.putItemBytes(1, first, value);
    expect(store.viewItemBytes(1, first)).toBe(value);
    next.ackItem("n", 1, first, startMs);
    expect(store.readItemBytes(1, first)).toBeNull();
    await next.end();
    expect(writer.allWritable(startMs)).toBe(true);
    expect(writer.writable(1, startMs).available).toBe(true);
  });

  test("under the engine: answers are settled, payloads come from the store, leases are never written, acks delete", async () => {
    const clock = new ManualClock(startMs);
    const store = new MemoryStore({ shards: 2 });
    const engine = open(store, new MemoryWriter(store), clock);

    const enqueued = unwrap(engine.enqueue("n", [item("t", { payload: new Uint8Array([1, 2]) }), item("t", { payload: new Uint8Array([3]) })], clock.nowMs()));
    await enqueued.durable;
    const outcome = dequeued(engine.dequeue("n", take([["t", 2]]), clock.nowMs()));
    if (outcome.kind !== "done") throw new Error("expected deliveries");
    expect(outcome.durable).toBeNull();
    expect(outcome.deliveries.map((d) => [...d.payload])).toEqual([[1, 2], [3]]);

    clock.advance(leaseWriteDelayMs + 1);
    engine.tick(clock.nowMs());
    const states = () => [...store.loadShards()].flatMap((shard) => [...shard.items].map(({ record }) => record.state));
    // The enqueue's values, unpatched: a lease is written only for a recovery to read, and none will.
    expect(states()).toEqual(["pending", "pending"]);

    const ack = ackDone(engine.ack("n", [outcome.deliveries[0]!.receipt], clock.nowMs()));
    expect(ack.acked).toBe(1);
    let committed = false;
    ack.commit?.listen({ committed: () => (committed = true), failed: () => {} });
    expect(committed).toBe(true);
    expect(states()).toEqual(["pending"]);
    expect(unwrap(engine.get("n", [enqueued.value.ids[0]!], clock.nowMs())).items[0]).toMatchObject({ state: "ended", outcome: "acked" });
  });

  test("a delivery reads the stored value without changing it; an at_most_once lease and a nack write a patched copy", async () => {
    const clock = new ManualClock(startMs);
    const store = new MemoryStore({ shards: 1 });
    const engine = open(store, new MemoryWriter(store), clock);
    await unwrap(engine.enqueue("n", [item("t", { payload: new Uint8Array([4]) }), item("u", { delivery: "at_most_once", payload: new Uint8Array([6]) })], clock.nowMs())).durable;
    const values = () => [...store.loadShards()][0]!.items;
    const before = [...values()].map(({ key }) => [...(store.viewItemBytes(0, key) as Uint8Array)]);

    const least = dequeued(engine.dequeue("n", take([["t", 1]]), clock.nowMs()));
    if (least.kind !== "done") throw new Error("expected a delivery");
    expect([...least.deliveries[0]!.payload]).toEqual([4]);
    expect([...values()].map(({ key }) => [...(store.viewItemBytes(0, key) as Uint8Array)])).toEqual(before);

    const most = dequeued(engine.dequeue("n", take([["u", 1]]), clock.nowMs()));
    if (most.kind !== "done") throw new Error("expected a delivery");
    await most.durable;
    expect([...most.deliveries[0]!.payload]).toEqual([6]);
    expect([...values()].map(({ record }) => [record.topic, record.state])).toEqual([
      ["t", "pending"],
      ["u", "leased"],
    ]);

    await unwrap(engine.nack("n", [{ receipt: least.deliveries[0]!.receipt, delayMs: null, metadata: null }], clock.nowMs())).durable;
    expect([...values()].map(({ record }) => [record.state, record.deliveries])).toEqual([
      ["pending", 1],
      ["leased", 1],
    ]);
    const again = dequeued(engine.dequeue("n", take([["t", 1]]), clock.nowMs()));
    if (again.kind !== "done") throw new Error("expected a delivery");
    expect([...again.deliveries[0]!.payload]).toEqual([4]);
  });

  test("the same engine over the GroupCommitter does write the lease (what the test above would miss)", async () => {
    const clock = new ManualClock(startMs);
    const store = new MemoryStore({ shards: 1 });
    const writer = new GroupCommitter(store, { clock });
    const engine = open(store, writer, clock);
    await unwrap(engine.enqueue("n", [item("t")], clock.nowMs())).durable;
    dequeued(engine.dequeue("n", take([["t", 1]]), clock.nowMs()));
    clock.advance(leaseWriteDelayMs + 1);
    engine.tick(clock.nowMs());
    await writer.drain();
    expect([...[...store.loadShards()][0]!.items].map(({ record }) => record.state)).toEqual(["leased"]);
  });
});
