// The one suite every Store implementation must pass (LMDB and memory): items
// through commit + loadShards, deletes, outcomes, meta, persistence across a
// reopen, key order per shard, pauses (of topics and groups), policies, and all-or-nothing batches. Each
// implementation's test file calls storeSuite with a harness that can open a
// fresh store and reopen it from what was durably committed.

import { afterEach, describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import type { ItemRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "../../src/storage/record.ts";
import type { CommitBatch, ItemKey, Store } from "../../src/storage/store.ts";
import { ItemStatePatch, encodeItemRecord, itemShapeFlags, patchItemState } from "../../src/storage/record-codec.ts";
import { fullItemRecord, itemRecord, outcomeRecord, shardBatch } from "./record-fixtures.ts";

export interface StoreHarness {
  /** A fresh, empty store with `shards` shards. */
  open(shards: number): Promise<Store>;
  /** Close (or crash) the store and open it again from its durable state. */
  reopen(store: Store): Promise<Store>;
  /** Remove everything the harness made. */
  cleanup(): Promise<void>;
  /**
   * How the store keeps acked items: as acked-log records (LMDB, memory; the
   * default) or as acked-log records per shard (PostgreSQL, where a shard's
   * rows move with it: a commit's acks make one record per shard).
   */
  ackedAs?: "log" | "log-by-shard";
}

export function loadAll(store: Store): Map<number, Array<{ key: ItemKey; record: ItemRecord }>> {
  const result = new Map<number, Array<{ key: ItemKey; record: ItemRecord }>>();
  for (const loaded of store.loadShards()) result.set(loaded.shard, [...loaded.items]);
  return result;
}

function policy(ns: string, topic: string, group: string | null, bounds: Partial<PolicyRecord>): PolicyRecord {
  return { ns, topic, group, weight: null, maxLeased: null, rate: null, ...bounds };
}

function batch(parts: Partial<CommitBatch>): CommitBatch {
  return { shards: [], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null, ...parts };
}

export function storeSuite(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`Store contract: ${name}`, () => {
    let harness: StoreHarness | null = null;
    const stores: Store[] = [];

    async function open(shards = 4): Promise<Store> {
      harness = await makeHarness();
      const store = await harness.open(shards);
      stores.push(store);
      return store;
    }

    async function reopen(store: Store): Promise<Store> {
      if (harness === null) throw new Error("open first");
      const reopened = await harness.reopen(store);
      stores.push(reopened);
      return reopened;
    }

    afterEach(async () => {
      for (const store of stores.splice(0)) await store.close();
      await harness?.cleanup();
      harness = null;
    });

    test("a fresh store has meta, empty shards and no outcomes", async () => {
      const store = await open(3);
      expect(store.shardCount).toBe(3);
      expect(store.meta.shards).toBe(3);
      expect(store.meta.keysReservedBelow).toBe(0);
      expect(store.meta.nodeId.length).toBeGreaterThan(0);
      // Its first open: boot 1.
      expect(store.meta.boots).toBe(1);
      const loaded = loadAll(store);
      expect([...loaded.keys()]).toEqual([0, 1, 2]);
      for (const items of loaded.values()) expect(items).toEqual([]);
      expect([...store.loadOutcomes()]).toEqual([]);
    });

    test("committed items load back equal, in their shards", async () => {
      const store = await open();
      const plain = itemRecord();
      const full = fullItemRecord();
      const result = await store.commit(
        batch({ shards: [shardBatch(0, [{ key: 1, record: plain }]), shardBatch(2, [{ key: 7, record: full }])] }),
      );
      expect(result.failedShards.size).toBe(0);
      expect(result.metaError).toBeNull();
      const loaded = loadAll(store);
      expect(loaded.get(0)).toEqual([{ key: 1, record: plain }]);
      expect(loaded.get(1)).toEqual([]);
      expect(loaded.get(2)).toEqual([{ key: 7, record: full }]);
    });

    test("a later commit overwrites and a null record deletes; deleting a missing key is harmless", async () => {
      const store = await open();
      await store.commit(batch({ shards: [shardBatch(1, [{ key: 1, record: itemRecord() }, { key: 2, record: itemRecord() }])] }));
      const leased = itemRecord({ state: "leased", leaseExpiresAtMs: 1_700_000_030_000, deliveries: 1, attempt: 1 });
      const result = await store.commit(
        batch({ shards: [shardBatch(1, [{ key: 1, record: leased }, { key: 2, record: null }, { key: 99, record: null }])] }),
      );
      expect(result.failedShards.size).toBe(0);
      expect(loadAll(store).get(1)).toEqual([{ key: 1, record: leased }]);
    });

    test("writes within one shard batch apply in order", async () => {
      const store = await open();
      const last = itemRecord({ priority: 9 });
      await store.commit(
        batch({
          shards: [shardBatch(0, [{ key: 5, record: itemRecord() }, { key: 5, record: null }, { key: 5, record: last }])],
        }),
      );
      expect(loadAll(store).get(0)).toEqual([{ key: 5, record: last }]);
    });

    test("each shard loads in ascending key order, keys beyond 32 bits included", async () => {
      const store = await open(2);
      const keys = [2 ** 40 + 3, 0, 17, 2 ** 32, 2 ** 32 - 1, 5, Number.MAX_SAFE_INTEGER, 256, 255];
      await store.commit(batch({ shards: [shardBatch(1, keys.map((key) => ({ key, record: itemRecord({ priority: key % 1000 }) })))] }));
      const loadedKeys = (loadAll(store).get(1) ?? []).map((entry) => entry.key);
      expect(loadedKeys).toEqual([...keys].sort((a, b) => a - b));
    });

    test("outcomes are stored, replaced and deleted by id", async () => {
      const store = await open();
      await store.commit(
        batch({ outcomes: [{ id: "0:1", record: outcomeRecord() }, { id: "3:17", record: outcomeRecord({ outcome: "expired" }) }] }),
      );
      await store.commit(batch({ outcomes: [{ id: "0:1", record: null }, { id: "2:5", record: outcomeRecord({ outcome: "cancelled", ns: "x" }) }] }));
      const outcomes = [...store.loadOutcomes()].sort((a, b) => a.id.localeCompare(b.id));
      expect(outcomes).toEqual([
        { id: "2:5", record: outcomeRecord({ outcome: "cancelled", ns: "x" }) },
        { id: "3:17", record: outcomeRecord({ outcome: "expired" }) },
      ]);
    });

    test("an acked outcome's result is stored with it, survives a reopen, and goes with the outcome", async () => {
      const store = await open();
      const result = new Uint8Array(64 * 1024).map((_, i) => i % 251);
      await store.commit(
        batch({ outcomes: [{ id: "1:7", record: outcomeRecord({ result }) }, { id: "2:8", record: outcomeRecord({ result: new Uint8Array(0) }) }, { id: "3:9", record: outcomeRecord() }] }),
      );
      const reopened = await reopen(store);
      const outcomes = [...reopened.loadOutcomes()].sort((a, b) => a.id.localeCompare(b.id));
      expect(outcomes.map((o) => o.id)).toEqual(["1:7", "2:8", "3:9"]);
      expect(outcomes[0]?.record.result).toEqual(result);
      expect(outcomes[1]?.record.result).toEqual(new Uint8Array(0));
      expect(outcomes[2]?.record.result ?? null).toBeNull();
      await reopened.commit(batch({ outcomes: [{ id: "1:7", record: null }] }));
      expect([...reopened.loadOutcomes()].map((o) => o.id).sort()).toEqual(["2:8", "3:9"]);
    });

    test("pauses are stored, replaced and deleted by (ns, topic, group), and survive a reopen", async () => {
      const store = await open();
      expect([...store.loadPauses()]).toEqual([]);
      const longNs = "é".repeat(127);
      const longTopic = "t".repeat(255);
      const longGroup = "g".repeat(255);
      const pause = (ns: string, topic: string, group: string | null, untilMs: number | null) => ({ ns, topic, group, record: { ns, topic, group, untilMs } });
      await store.commit(
        batch({
          pauses: [
            pause("n", "a", null, null),
            pause("n", "b", null, 5),
            pause("m", "a", null, 7),
            pause(longNs, longTopic, null, null),
            pause("n", "a", "g1", 11),
            pause("n", "a", "g2", null),
            pause(longNs, longTopic, longGroup, 13),
          ],
        }),
      );
      await store.commit(
        batch({
          pauses: [
            pause("n", "a", null, 9),
            { ns: "n", topic: "b", group: null, record: null },
            { ns: "gone", topic: "never", group: null, record: null },
            { ns: "n", topic: "a", group: "g2", record: null },
            pause("n", "a", "g1", 12),
          ],
        }),
      );
      const byName = (list: Iterable<PauseRecord>) =>
        [...list].sort((x, y) => `${x.ns}/${x.topic}/${x.group}`.localeCompare(`${y.ns}/${y.topic}/${y.group}`));
      const expected = byName(<PauseRecord[]>[
        { ns: "m", topic: "a", group: null, untilMs: 7 },
        { ns: "n", topic: "a", group: null, untilMs: 9 },
        { ns: "n", topic: "a", group: "g1", untilMs: 12 },
        { ns: longNs, topic: longTopic, group: null, untilMs: null },
        { ns: longNs, topic: longTopic, group: longGroup, untilMs: 13 },
      ]);
      expect(byName(store.loadPauses())).toEqual(expected);
      // Pauses sit beside the meta record: it is unchanged, and both survive a reopen.
      const reopened = await reopen(store);
      expect(reopened.meta.keysReservedBelow).toBe(0);
      expect(byName(reopened.loadPauses())).toEqual(expected);
    });

    test("a pause commits atomically with the items of its batch", async () => {
      const store = await open();
      await store.commit(
        batch({
          shards: [shardBatch(0, [{ key: 1, record: itemRecord() }])],
          pauses: [{ ns: "n", topic: "t", group: null, record: { ns: "n", topic: "t", group: null, untilMs: null } }],
          policies: [{ ns: "n", topic: "t", group: "g", record: policy("n", "t", "g", { weight: 2 }) }],
        }),
      );
      const reopened = await reopen(store);
      expect(loadAll(reopened).get(0)?.length).toBe(1);
      expect([...reopened.loadPauses()]).toEqual([{ ns: "n", topic: "t", group: null, untilMs: null }]);
      expect([...reopened.loadPolicies()]).toEqual([policy("n", "t", "g", { weight: 2 })]);
    });

    test("policies are stored, replaced and deleted by (ns, topic, group), apart from pauses, and survive a reopen", async () => {
      const store = await open();
      expect([...store.loadPolicies()]).toEqual([]);
      const longNs = "é".repeat(127);
      const longTopic = "t".repeat(255);
      const longGroup = "ü".repeat(127);
      const write = (record: PolicyRecord) => ({ ns: record.ns, topic: record.topic, group: record.group, record });
      await store.commit(
        batch({
          policies: [
            write(policy("n", "a", null, { maxLeased: 4 })),
            write(policy("n", "a", "*", { weight: 2, rate: { count: 10, perMs: 1_000 } })),
            write(policy("n", "a", "acme", { weight: 5 })),
            write(policy("n", "b", null, { rate: { count: 1, perMs: 60_000 } })),
            write(policy(longNs, longTopic, longGroup, { maxLeased: 1 })),
          ],
          // A pause of the same scope is another record: a policy write leaves it alone.
          pauses: [{ ns: "n", topic: "a", group: null, record: { ns: "n", topic: "a", group: null, untilMs: null } }],
        }),
      );
      await store.commit(
        batch({
          policies: [
            write(policy("n", "a", null, { maxLeased: 8 })),
            { ns: "n", topic: "a", group: "acme", record: null },
            { ns: "n", topic: "b", group: null, record: null },
            { ns: "gone", topic: "never", group: "*", record: null },
          ],
        }),
      );
      const byScope = (list: Iterable<PolicyRecord>) =>
        [...list].sort((x, y) => `${x.ns}/${x.topic}/${x.group}`.localeCompare(`${y.ns}/${y.topic}/${y.group}`));
      const expected = byScope([
        policy("n", "a", null, { maxLeased: 8 }),
        policy("n", "a", "*", { weight: 2, rate: { count: 10, perMs: 1_000 } }),
        policy(longNs, longTopic, longGroup, { maxLeased: 1 }),
      ]);
      expect(byScope(store.loadPolicies())).toEqual(expected);
      expect([...store.loadPauses()]).toEqual([{ ns: "n", topic: "a", group: null, untilMs: null }]);
      const reopened = await reopen(store);
      expect(reopened.meta.keysReservedBelow).toBe(0);
      expect(byScope(reopened.loadPolicies())).toEqual(expected);
      expect([...reopened.loadPauses()]).toEqual([{ ns: "n", topic: "a", group: null, untilMs: null }]);
    });

    test("schedules are stored with the items of their batch, replaced and deleted by (ns, name), and survive a reopen", async () => {
      const store = await open(2);
      expect([...store.loadSchedules()]).toEqual([]);
      const schedule = (ns: string, name: string, overrides: Partial<ScheduleRecord> = {}): ScheduleRecord => ({
        ns,
        name,
        cron: null,
        everyMs: 1000,
        timezone: "UTC",
        catchUp: "one",
        anchorMs: 5,
        lastAtMs: null,
        lastId: null,
        item: { topic: "t", priority: 3, payload: new Uint8Array([1, 2]) },
        ...overrides,
      });
      const write = (record: ScheduleRecord, shard = 1) => ({ ns: record.ns, name: record.name, shard, record });
      await store.commit(batch({ schedules: [write(schedule("n", "a")), write(schedule("n", "b", { cron: "0 * * * * *", everyMs: null, timezone: "Europe/Berlin" })), write(schedule("m", "a"))] }));
      await store.commit(
        batch({
          shards: [shardBatch(1, [{ key: 1, record: itemRecord() }])],
          schedules: [write(schedule("n", "a", { lastAtMs: 1005, lastId: "1:1" })), { ns: "m", name: "a", shard: 1, record: null }],
        }),
      );
      const expected = [schedule("n", "a", { lastAtMs: 1005, lastId: "1:1" }), schedule("n", "b", { cron: "0 * * * * *", everyMs: null, timezone: "Europe/Berlin" })];
      const byName = (list: Iterable<ScheduleRecord>) => [...list].sort((x, y) => (x.ns + x.name < y.ns + y.name ? -1 : 1));
      expect(byName(store.loadSchedules())).toEqual(expected);
      const reopened = await reopen(store);
      expect(byName(reopened.loadSchedules())).toEqual(expected);
      expect(loadAll(reopened).get(1)?.length).toBe(1);
    });

    test("storedCounts: items over every shard and outcomes, as loaded, after puts, overwrites and deletes", async () => {
      const store = await open(3);
      expect(store.storedCounts()).toEqual({ items: 0, outcomes: 0 });
      await store.commit(
        batch({
          shards: [
            shardBatch(0, [{ key: 1, record: itemRecord() }, { key: 2, record: itemRecord() }]),
            shardBatch(2, [{ key: 1, record: itemRecord() }]),
          ],
          outcomes: [{ id: "1:9", record: outcomeRecord() }],
        }),
      );
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 2, record: null }, { key: 1, record: itemRecord({ priority: 3 }) }])] }));
      const loadedItems = [...loadAll(store).values()].reduce((sum, items) => sum + items.length, 0);
      expect(store.storedCounts()).toEqual({ items: loadedItems, outcomes: [...store.loadOutcomes()].length });
      expect(store.storedCounts()).toEqual({ items: 2, outcomes: 1 });
    });

    test("everything committed survives a reopen; meta keeps its node id and new key reservation, and counts the boot", async () => {
      const store = await open();
      const nodeId = store.meta.nodeId;
      const full = fullItemRecord();
      await store.commit(
        batch({
          shards: [shardBatch(3, [{ key: 42, record: full }])],
          outcomes: [{ id: "1:1", record: outcomeRecord() }],
          meta: { ...store.meta, keysReservedBelow: 10_000 },
        }),
      );
      expect(store.meta.keysReservedBelow).toBe(10_000);
      const reopened = await reopen(store);
      expect(reopened.meta).toEqual({ formatVersion: 1, shards: 4, nodeId, keysReservedBelow: 10_000, boots: 2 });
      expect(loadAll(reopened).get(3)).toEqual([{ key: 42, record: full }]);
      expect([...reopened.loadOutcomes()]).toEqual([{ id: "1:1", record: outcomeRecord() }]);
    });

    test("every reopen is a new boot, committed at open, and later meta writes keep it", async () => {
      let store = await open();
      expect(store.meta.boots).toBe(1);
      store = await reopen(store);
      expect(store.meta.boots).toBe(2);
      // A meta write built from the store's meta (as group commit does) keeps the boot.
      await store.commit(batch({ meta: { ...store.meta, keysReservedBelow: 20_000 } }));
      expect(store.meta).toMatchObject({ boots: 2, keysReservedBelow: 20_000 });
      // A reopen right after an open without any commit still counts: the boot was stored at open.
      store = await reopen(store);
      store = await reopen(store);
      expect(store.meta).toMatchObject({ boots: 4, keysReservedBelow: 20_000 });
    });

    test("a batch holding an invalid record throws an AssertionError from commit() itself (not a rejection), before any shard is written", async () => {
      const store = await open();
      const bad = itemRecord({ state: "bogus" as ItemRecord["state"] });
      const attempt = () =>
        store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record: itemRecord() }]), shardBatch(1, [{ key: 2, record: bad }])] }));
      expect(attempt).toThrow(AssertionError);
      expect(attempt).toThrow("item record: state bogus");
      const loaded = loadAll(store);
      expect(loaded.get(0)).toEqual([]);
      expect(loaded.get(1)).toEqual([]);
    });

    test("loaded records are copies: mutating them or the committed object changes nothing stored", async () => {
      const store = await open();
      const record = itemRecord();
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record }])] }));
      record.payload[0] = 99;
      const first = loadAll(store).get(0)?.[0]?.record;
      expect(first?.payload[0]).toBe(1);
      if (first !== undefined) first.payload[1] = 77;
      expect(loadAll(store).get(0)?.[0]?.record.payload).toEqual(new Uint8Array([1, 2, 3, 4]));
    });

    test("readItem: the record as last committed, null for a missing key or another shard's key", async () => {
      const store = await open();
      const first = itemRecord({ payload: new Uint8Array([1, 1, 1]) });
      const second = fullItemRecord();
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record: first }, { key: 2, record: second }])] }));
      expect(store.readItem(0, 1)).toEqual(first);
      expect(store.readItem(0, 2)).toEqual(second);
      expect(store.readItem(0, 3)).toBeNull();
      expect(store.readItem(1, 1)).toBeNull();
      const changed = itemRecord({ payload: new Uint8Array([2]), attempt: 1 });
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record: changed }, { key: 2, record: null }])] }));
      expect(store.readItem(0, 1)).toEqual(changed);
      expect(store.readItem(0, 2)).toBeNull();
      const reopened = await reopen(store);
      expect(reopened.readItem(0, 1)).toEqual(changed);
    });

    test("readItem returns copies: a later read does not change an earlier result's bytes", async () => {
      const store = await open();
      const a = itemRecord({ payload: new Uint8Array([1, 2, 3, 4]), metadata: new Uint8Array([5]) });
      const b = itemRecord({ payload: new Uint8Array([9, 9, 9, 9]), metadata: new Uint8Array([8]) });
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record: a }, { key: 2, record: b }])] }));
      const readA = store.readItem(0, 1);
      const readB = store.readItem(0, 2);
      expect(readA?.payload).toEqual(new Uint8Array([1, 2, 3, 4]));
      expect(readA?.metadata).toEqual(new Uint8Array([5]));
      expect(readB?.payload).toEqual(new Uint8Array([9, 9, 9, 9]));
      // Plain Uint8Arrays, not views into a reused read buffer.
      expect(readA?.payload.constructor).toBe(Uint8Array);
    });

    test("readItemBytes: the stored value as last committed, a copy of its own; putItemBytes-style values commit as they are", async () => {
      const store = await open();
      const small = itemRecord({ payload: new Uint8Array([1, 1, 1]) });
      const large = fullItemRecord();
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 1, record: small }, { key: 2, record: large }])] }));
      const valueA = store.readItemBytes(0, 1);
      const valueB = store.readItemBytes(0, 2);
      expect(valueA).toEqual(encodeItemRecord(small));
      expect(valueB).toEqual(encodeItemRecord(large));
      expect(store.readItemBytes(0, 3)).toBeNull();
      expect(store.readItemBytes(1, 1)).toBeNull();
      // A copy: changing it changes nothing stored, and a later read does not change it.
      valueA![valueA!.length - 1] = 0xee;
      expect(store.readItem(0, 1)).toEqual(small);
      expect(valueB).toEqual(encodeItemRecord(large));
      // Patch the state and commit the value itself (what a lease does).
      const value = store.readItemBytes(0, 2)!;
      const patch = Object.assign(new ItemStatePatch(), {
        shapeFlags: itemShapeFlags(true, true, true, true, true, true),
        state: "leased",
        deliverAtMs: 5,
        leaseExpiresAtMs: 6,
        attempt: 3,
        deliveries: 9,
        leaseBoot: 2,
      });
      expect(patchItemState(value, patch)).toBe(true);
      await store.commit(batch({ shards: [shardBatch(0, [{ key: 2, record: value }, { key: 3, record: small }])] }));
      const expected = { ...large, state: "leased" as const, deliverAtMs: 5, leaseExpiresAtMs: 6, attempt: 3, deliveries: 9, leaseBoot: 2 };
      expect(store.readItem(0, 2)).toEqual(expected);
      expect(store.readItem(0, 3)).toEqual(small);
      const reopened = await reopen(store);
      expect(reopened.readItem(0, 2)).toEqual(expected);
      expect(loadAll(reopened).get(0)?.map((entry) => entry.key)).toEqual([1, 2, 3]);
    });

    test("loadShards({ bytes: false }) loads every field but payload and metadata, which are one shared empty array", async () => {
      const store = await open();
      const full = fullItemRecord();
      await store.commit(batch({ shards: [shardBatch(1, [{ key: 4, record: full }, { key: 5, record: itemRecord() }])] }));
      const loaded: Array<{ key: ItemKey; record: ItemRecord }> = [];
      for (const shard of store.loadShards({ bytes: false })) if (shard.shard === 1) loaded.push(...shard.items);
      expect(loaded.map((entry) => entry.key)).toEqual([4, 5]);
      const [withoutBytes, other] = loaded.map((entry) => entry.record);
      expect(withoutBytes).toEqual({ ...full, payload: new Uint8Array(0), metadata: new Uint8Array(0) });
      expect(withoutBytes?.payload).toBe(other?.payload as Uint8Array);
      expect(withoutBytes?.metadata).toBe(withoutBytes?.payload as Uint8Array);
    });

    test("acked items: acked-log records (per shard or not), kept across a reopen, purged by end time", async () => {
      let store = await open(4);
      const record = (endedAtMs: number, keys: number[]) => ({
        endedAtMs,
        namespaces: ["a", "b"],
        nsIndexes: keys.map((_, i) => i % 2),
        shards: keys.map((key) => key % 4),
        keys,
      });
      await store.commit(batch({ acked: record(100_000, [5, 3, 9]) }));
      await store.commit(batch({ acked: record(200_000, [12]) }));
      await store.commit(batch({ acked: record(300_000, [20, 21]) }));
      if (harness?.ackedAs === "log-by-shard") {
        // Per record: its end, and its keys with their namespaces, in key order per namespace (shards are not kept).
        const acked = () =>
          [...store.loadAckedLog()].map((r) => `${r.endedAtMs} ${r.keys.map((key, i) => `${r.namespaces[r.nsIndexes[i]!]}:${key}`).join(",")}`).sort();
        expect(acked()).toEqual(["100000 a:5,a:9", "100000 b:3", "200000 a:12", "300000 a:20", "300000 b:21"]);
        expect([...store.loadAckedLog()].every((r) => r.shards.length === 0)).toBe(true);
        // Purge below 200_000: only the records that ended at 100_000 go.
        await store.commit(batch({ ackedPurgeBeforeMs: 200_000 }));
        expect(acked()).toEqual(["200000 a:12", "300000 a:20", "300000 b:21"]);
        store = await reopen(store);
        expect(acked()).toEqual(["200000 a:12", "300000 a:20", "300000 b:21"]);
        expect([...store.loadOutcomes()]).toEqual([]);
        // A purge and a new record in one commit; new records keep coming after old ones, even after a reopen.
        await store.commit(batch({ acked: record(400_000, [32]), ackedPurgeBeforeMs: 300_001 }));
        store = await reopen(store);
        expect(acked()).toEqual(["400000 a:32"]);
        return;
      }
      store = await reopen(store);
      const loaded = [...store.loadAckedLog()];
      expect(loaded.map((r) => r.endedAtMs)).toEqual([100_000, 200_000, 300_000]);
      // Commits further apart than blockSpanMs are records of their own (the LMDB store merges closer ones).
      // Entries come back by namespace, in key order within each; the log keeps no shards (keys are unique).
      const first = loaded[0]!;
      expect(first.keys).toEqual([5, 9, 3]);
      expect(first.keys.map((_, i) => first.namespaces[first.nsIndexes[i]!])).toEqual(["a", "a", "b"]);
      expect(first.shards).toEqual([]);
      // Purge below 200_000: only the record that ended at 100_000 goes (200_000 is not below it).
      await store.commit(batch({ ackedPurgeBeforeMs: 200_000 }));
      expect([...store.loadAckedLog()].map((r) => r.endedAtMs)).toEqual([200_000, 300_000]);
      // A purge and a new record in one commit; new records keep coming after old ones, even after a reopen.
      store = await reopen(store);
      await store.commit(batch({ acked: record(400_000, [30]), ackedPurgeBeforeMs: 300_001 }));
      store = await reopen(store);
      expect([...store.loadAckedLog()].map((r) => r.endedAtMs)).toEqual([400_000]);
    });
  });
}
