// Goal: a write of a stored item that only changes its state (lease, extend,
// nack, lease expiry) patches a copy of the stored value (record version 3)
// and leaves the store holding exactly what a whole-record write would; and
// whenever the stored value lacks what memory holds (a value of an older
// record version, a dead reason or `after` list dropped by a redrive not yet
// committed, a nack's metadata) the whole record is written instead.

import { describe, expect, test } from "bun:test";
import type { ItemState } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { ItemRecord } from "../../src/storage/record.ts";
import { encodeMetaRecord } from "../../src/storage/record-codec.ts";
import { newMetaRecord, nextBoot } from "../../src/storage/store-meta.ts";
import { fromHex, itemRecord, v2Values } from "../storage/record-fixtures.ts";
import { dequeued, Harness, item, take, unwrap } from "./support/harness.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function getState(engine: Engine, ns: string, id: string, nowMs: number): ItemState {
  const got = unwrap(engine.get(ns, [id], nowMs)).items[0];
  if (got === null || got === undefined || got.state === "ended") throw new Error(`no live item ${id}`);
  return got;
}

/** What memory shows for the item, in the stored record's terms. */
function expectStoredMatches(store: MemoryStore, engine: Engine, ns: string, id: string, nowMs: number): ItemRecord {
  const state = getState(engine, ns, id, nowMs);
  const [shard, key] = id.split(":").map(Number) as [number, number];
  const stored = store.readItem(shard, key);
  expect(stored).not.toBeNull();
  expect(store.readItemBytes(shard, key)?.[0]).toBe(RECORD_VERSION);
  const storedState = state.state === "leased" ? "leased" : state.state === "dead" ? "dead" : "pending";
  expect({
    state: stored!.state,
    attempt: stored!.attempt,
    deliverAtMs: stored!.deliverAtMs,
    leaseExpiresAtMs: stored!.leaseExpiresAtMs,
    payload: stored!.payload,
    metadata: stored!.metadata,
    deadReason: stored!.deadReason,
  }).toEqual({
    state: storedState,
    attempt: state.attempt,
    deliverAtMs: state.deliverAtMs,
    leaseExpiresAtMs: state.leaseExpiresAtMs ?? null,
    payload: state.payload,
    metadata: state.metadata,
    deadReason: state.deadReason ?? null,
  });
  return stored!;
}

describe("item writes patch the stored value", () => {
  test("lease, extend, nack and expiry are patched writes, and the store matches memory after each", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = (await h.enqueue("n", [item("t", { payload: bytes("body"), metadata: bytes("meta"), ttlMs: 3_600_000, key: "k1" })])) as [string];
    const patchedBefore = () => h.store.commitHistory.reduce((sum, commit) => sum + commit.itemValues, 0);

    const [d1] = await h.dequeue("n", [["t", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    expect([new TextDecoder().decode(d1!.payload), new TextDecoder().decode(d1!.metadata)]).toEqual(["body", "meta"]);
    await h.writer.drain();
    expect(patchedBefore()).toBe(1);
    const leased = expectStoredMatches(h.store, h.engine, "n", id, h.now);
    expect([leased.state, leased.attempt, leased.deliveries, leased.key, leased.ttlExpiresAtMs]).toEqual(["leased", 1, 1, "k1", h.now + 3_600_000]);

    await h.settle(h.engine.extend("n", [{ receipt: d1!.receipt, leaseMs: 5_000 }], h.now));
    expect(patchedBefore()).toBe(2);
    expect(expectStoredMatches(h.store, h.engine, "n", id, h.now).leaseExpiresAtMs).toBe(h.now + 5_000);

    await h.settle(h.engine.nack("n", [{ receipt: d1!.receipt, delayMs: 1_000, metadata: null }], h.now));
    expect(patchedBefore()).toBe(3);
    expect(expectStoredMatches(h.store, h.engine, "n", id, h.now).deliverAtMs).toBe(h.now + 1_000);

    h.advance(1_000);
    await h.dequeue("n", [["t", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    // The lease commits on its own (an at_least_once dequeue does not wait for it), apart from the expiry.
    await h.writer.drain();
    h.advance(30_000);
    await h.writer.drain();
    expect(patchedBefore()).toBe(5);
    const expired = expectStoredMatches(h.store, h.engine, "n", id, h.now);
    expect([expired.state, expired.attempt, expired.leaseExpiresAtMs]).toEqual(["pending", 2, null]);
    h.check();
  });

  test("a deferred lease write patches the value its delivery read: one store read per lease, and the store matches memory", async () => {
    const h = new Harness({ shards: 1 });
    const ids = await h.enqueue("n", [1, 2, 3].map((n) => item("t", { payload: bytes(`body ${n}`), metadata: bytes(`meta ${n}`), key: `k${n}` })));
    await h.writer.drain();
    let reads = 0;
    const readItemBytes = h.store.readItemBytes.bind(h.store);
    h.store.readItemBytes = (shard, key) => {
      reads++;
      return readItemBytes(shard, key);
    };
    const deliveries = await h.dequeue("n", [["t", 3]]);
    expect(deliveries.map((d) => new TextDecoder().decode(d.payload))).toEqual(["body 1", "body 2", "body 3"]);
    h.engine.flushDeferredWrites();
    await h.writer.drain();
    expect(reads).toBe(3);
    for (const id of ids as string[]) expect(expectStoredMatches(h.store, h.engine, "n", id, h.now).state).toBe("leased");
    // The delivered payloads are copies: patching the kept value left them as delivered.
    expect(deliveries.map((d) => new TextDecoder().decode(d.metadata))).toEqual(["meta 1", "meta 2", "meta 3"]);
    h.check();
  });

  test("a nack's metadata is written whole (the stored value has the old one), and so is every later write of that item", async () => {
    const h = new Harness({ shards: 1 });
    const [id] = (await h.enqueue("n", [item("t", { payload: bytes("p"), metadata: bytes("old") })])) as [string];
    const [d1] = await h.dequeue("n", [["t", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    await h.settle(h.engine.nack("n", [{ receipt: d1!.receipt, delayMs: null, metadata: bytes("new") }], h.now));
    const [d2] = await h.dequeue("n", [["t", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    expect(new TextDecoder().decode(d2!.metadata)).toBe("new");
    await h.writer.drain();
    expect(h.store.commitHistory.slice(-2).map((commit) => commit.itemValues)).toEqual([0, 0]);
    expect(new TextDecoder().decode(expectStoredMatches(h.store, h.engine, "n", id, h.now).metadata)).toBe("new");
  });

  test("a redrive and a lease in one batch: the lease's write drops the dead reason and the after list too", async () => {
    const h = new Harness({ shards: 1 });
    const [dep] = (await h.enqueue("n", [item("deps")])) as [string];
    const [id] = (await h.enqueue("n", [item("t", { payload: bytes("p"), maxAttempts: 1, after: [dep] })])) as [string];
    const [d] = await h.dequeue("n", [["deps", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    await h.settleAck(h.engine.ack("n", [d!.receipt], h.now));
    const [taken] = await h.dequeue("n", [["t", 1]]);
    h.engine.flushDeferredWrites(); // write the at_least_once lease now (it is deferred: limits.ts's leaseWriteDelayMs)
    await h.settle(h.engine.nack("n", [{ receipt: taken!.receipt, delayMs: null, metadata: null }], h.now));
    expect(h.store.readItem(0, Number(id.split(":")[1]))?.deadReason).toBe("max_attempts");

    // Hold commits: the store keeps the dead letter (reason and after list) while memory redrives and leases it.
    h.store.pauseCommits();
    const redrive = unwrap(h.engine.redrive("n", "t", null, h.now));
    const lease = dequeued(h.engine.dequeue("n", take([["t", 1]]), h.now));
    h.engine.flushDeferredWrites();
    expect(lease.kind).toBe("done");
    h.store.resumeCommits();
    await redrive.durable;
    await h.writer.drain();
    const stored = expectStoredMatches(h.store, h.engine, "n", id, h.now);
    expect([stored.state, stored.deadReason, stored.after, stored.attempt]).toEqual(["leased", null, null, 1]);
    await h.restart();
    expect(h.state("n", id)).toBe("leased");
    h.check();
  });

  test("an item stored by record version 2 is written whole at its next write, then patched", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    // The version 2 fixture: a leased item (billing/invoices, key 0) whose lease ends at 1_700_000_030_000.
    const meta = { ...nextBoot(nextBoot(newMetaRecord(1))), keysReservedBelow: 10 };
    const store = new MemoryStore({ shards: 1 }, { shards: [new Map([[0, fromHex(v2Values.leased)]])], outcomes: new Map(), ackedLog: [], meta: encodeMetaRecord(meta) });
    const writer = new GroupCommitter(store, { clock });
    clock.advance(60_000);
    const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
    engine.tick(clock.nowMs());
    await writer.drain();
    // The expired lease's write could not patch a version 2 value: it wrote the whole record, in the current version.
    expect(store.commitHistory.map((commit) => commit.itemValues)).toEqual([0]);
    expect(store.readItemBytes(0, 0)?.[0]).toBe(RECORD_VERSION);
    expect(store.readItem(0, 0)).toEqual(itemRecord({ state: "pending", attempt: 1, deliveries: 1, leaseBoot: 2 }));

    const outcome = dequeued(engine.dequeue("billing", take([["invoices", 1]]), clock.nowMs()));
    engine.flushDeferredWrites();
    if (outcome.kind !== "done") throw new Error("expected deliveries");
    const [delivery] = outcome.deliveries;
    expect([delivery!.payload, delivery!.attempt]).toEqual([new Uint8Array([1, 2, 3, 4]), 2]);
    await writer.drain();
    expect(store.commitHistory.map((commit) => commit.itemValues)).toEqual([0, 1]);
    expect(store.readItem(0, 0)).toEqual(
      itemRecord({ state: "leased", attempt: 2, deliveries: 2, leaseBoot: meta.boots, leaseExpiresAtMs: clock.nowMs() + 30_000 }),
    );
    engine.checkInvariants();
  });
});
