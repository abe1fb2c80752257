// Goal: the PostgreSQL store counts what each commit costs the database
// (round trips, row writes and record bytes sent, commit-counters.ts) for
// one item's life as cluster mode runs it, behind a shard fence: enqueue, a
// lease written as a patched value, an ack, and the purge of the acked
// outcome once retention is over. The expected numbers are decision 036's
// table: a change of the commit's SQL that moves them must update both.
// Each commit is one round trip (three with a meta write); a lease is sent
// as the changed header alone, and a reopen (a crash-recovered node) reads
// the record the copy holds; a database that disagrees with the copy fails
// the patch, and the key is then written whole. Acks go to per-shard blocks
// (shared within blockSpanMs, loaded by a shard's new owner), except an ack
// with a result, which keeps its outcome row. Skipped when PostgreSQL is not
// installed (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import type { PostgresStore, PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";
import type { CommitCounts } from "../../../src/storage/postgres/commit-counters.ts";
import type { ShardFence } from "../../../src/storage/postgres/shard-fence.ts";
import type { SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import { AckedLogBuilder } from "../../../src/storage/acked-log.ts";
import { ByteWriter } from "../../../src/storage/byte-cursor.ts";
import { encodeItemRecord } from "../../../src/storage/record-codec.ts";
import type { ItemRecord } from "../../../src/storage/record.ts";
import { ItemStateFields, StoredItemPatcher } from "../../../src/storage/stored-item-patch.ts";
import type { CommitBatch } from "../../../src/storage/store.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { itemRecord, shardBatch } from "../record-fixtures.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

const available = postgresAvailable();

function options(url: string): PostgresStoreOptions {
  return storeOptions(url, { shards: 2, keyRangePerOpen: null, loadAllShards: true });
}

/** A fence that holds every shard at epoch 1 as node "n1" (the test sets the shard rows to match). */
const fence: ShardFence = { nodeId: "n1", heldEpoch: () => 1, lost: () => {}, suspect: () => {} };

describe.skipIf(!available)("PostgreSQL commit counts per item lifecycle", () => {
  const session = storeSession();

  async function fencedStore(): Promise<{ store: PostgresStore; admin: SqlClient; url: string }> {
    const url = await session.server().createDatabase("commit_counts");
    const admin = session.admin(url);
    const store = await session.open(options(url));
    await admin.query("UPDATE orq_shards SET owner = 'n1', epoch = 1");
    store.fence = fence;
    return { store, admin, url };
  }

  /** The stored value of `record` patched as a lease of it (what the engine writes for a lease). */
  function leased(store: PostgresStore, key: number, leaseBoot: number): Uint8Array {
    const fields = new ItemStateFields();
    Object.assign(fields, { state: "leased", deliverAtMs: 1_000, leaseExpiresAtMs: 31_000, attempt: 1, deliveries: 1, leaseBoot });
    const patched = new StoredItemPatcher(store).patched(1, key, fields);
    expect(patched).toBeInstanceOf(Uint8Array);
    return patched as Uint8Array;
  }

  const enqueued: ItemRecord = itemRecord({ enqueuedAtMs: 1_000, deliverAtMs: 1_000 });
  const leasedRecord: ItemRecord = { ...enqueued, state: "leased", leaseExpiresAtMs: 31_000, attempt: 1, deliveries: 1, leaseBoot: 1 };

  /** Commit `batch` and return what it cost. */
  async function cost(store: PostgresStore, batch: CommitBatch): Promise<Omit<CommitCounts, "commits">> {
    const before = store.commitCounts();
    const result = await store.commit(batch);
    expect(result.failedShards.size).toBe(0);
    const after = store.commitCounts();
    expect(after.commits - before.commits).toBe(after.roundTrips === before.roundTrips ? 0 : 1);
    return { roundTrips: after.roundTrips - before.roundTrips, rowWrites: after.rowWrites - before.rowWrites, valueBytes: after.valueBytes - before.valueBytes };
  }

  test("enqueue, lease, ack and purge: round trips and row writes of each commit", async () => {
    const { store } = await fencedStore();
    const enqueue = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: enqueued }])], outcomes: [], meta: null });
    const lease = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: leased(store, 7, 1) }])], outcomes: [], meta: null });
    expect(store.readItem(1, 7)).toEqual(leasedRecord);

    const acked = { endedAtMs: 2_000, namespaces: ["billing"], nsIndexes: [0], shards: [1], keys: [7] };
    const ack = await cost(store, { shards: [shardBatch(1, [{ key: 7, record: null }])], outcomes: [], meta: null, acked });
    const purge = await cost(store, { shards: [], outcomes: [], meta: null, ackedPurgeBeforeMs: 2_001 });

    const recordBytes = encodeItemRecord(enqueued).length;
    const block = new AckedLogBuilder();
    block.add(acked);
    block.encode(new ByteWriter());
    // Each commit is one statement (commit-sql.ts): one round trip.
    expect({ enqueue, lease, ack, purge }).toEqual({
      enqueue: { roundTrips: 1, rowWrites: 1, valueBytes: recordBytes },
      // The header up to leaseBoot's last byte (item-record.ts), not the whole record.
      lease: { roundTrips: 1, rowWrites: 1, valueBytes: 60 },
      // The item's delete and its shard's acked block (acked-blocks.ts).
      ack: { roundTrips: 1, rowWrites: 2, valueBytes: block.encodedBytes },
      purge: { roundTrips: 1, rowWrites: 1, valueBytes: 0 },
    });
    expect(store.readItem(1, 7)).toBeNull();
  });

  test("100 items through one commit per step: about three row writes an item, one acked block", async () => {
    const { store } = await fencedStore();
    const keys = Array.from({ length: 100 }, (_, index) => 100 + index);
    const enqueue = await cost(store, { shards: [shardBatch(1, keys.map((key) => ({ key, record: enqueued })))], outcomes: [], meta: null });
    const lease = await cost(store, { shards: [shardBatch(1, keys.map((key) => ({ key, record: leased(store, key, 1) })))], outcomes: [], meta: null });
    const acked = { endedAtMs: 2_000, namespaces: ["billing"], nsIndexes: keys.map(() => 0), shards: keys.map(() => 1), keys };
    const ack = await cost(store, { shards: [shardBatch(1, keys.map((key) => ({ key, record: null })))], outcomes: [], meta: null, acked });
    const purge = await cost(store, { shards: [], outcomes: [], meta: null, ackedPurgeBeforeMs: 2_001 });
    expect([enqueue.rowWrites, lease.rowWrites, ack.rowWrites, purge.rowWrites]).toEqual([100, 100, 101, 1]);
    // One run of 100 keys: a block of a few bytes, whatever the count.
    expect(ack.valueBytes).toBeLessThan(40);
  });

  test("acks within blockSpanMs share a shard's block; a failed commit's keys leave it; a new owner loads it and starts the next", async () => {
    const { store, admin, url } = await fencedStore();
    const ack = (key: number, endedAtMs: number): CommitBatch => ({
      shards: [shardBatch(1, [{ key, record: null }])],
      outcomes: [],
      meta: null,
      acked: { endedAtMs, namespaces: ["billing"], nsIndexes: [0], shards: [1], keys: [key] },
    });
    await cost(store, ack(1, 1_000));
    await cost(store, ack(2, 2_000));
    await admin.query(`CREATE FUNCTION refuse_9() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF OLD.key = 9 THEN RAISE EXCEPTION 'refused key 9'; END IF; RETURN OLD; END $$`);
    await cost(store, { shards: [shardBatch(1, [{ key: 9, record: enqueued }])], outcomes: [], meta: null });
    await admin.query("CREATE TRIGGER refuse_9 BEFORE DELETE ON orq_items FOR EACH ROW EXECUTE FUNCTION refuse_9()");
    expect((await store.commit(ack(9, 2_500))).failedShards.has(1)).toBe(true);
    await cost(store, ack(3, 3_000));
    const keysOf = (records: Iterable<{ keys: number[]; endedAtMs: number }>) => [...records].map((r) => `${r.endedAtMs}:${r.keys.join(",")}`);
    expect(keysOf(store.loadAckedLog())).toEqual(["3000:1,2,3"]);
    expect(await admin.query("SELECT shard, seq FROM orq_acked")).toEqual([[1, "0"]]);
    const owner = await session.open({ ...options(url), loadAllShards: false });
    expect(keysOf(owner.loadAckedLog())).toEqual([]);
    await owner.adoptShard(1);
    expect(keysOf(owner.loadAckedLog())).toEqual(["3000:1,2,3"]);
    owner.fence = fence;
    await cost(owner, ack(4, 4_000));
    expect(keysOf(owner.loadAckedLog())).toEqual(["3000:1,2,3", "4000:4"]);
    owner.dropShard(1);
    expect(keysOf(owner.loadAckedLog())).toEqual([]);
  });

  test("an acked item with a result stays an outcome row of its own, result and all; plain acks go to the blocks", async () => {
    const { store, url } = await fencedStore();
    await cost(store, { shards: [shardBatch(1, [{ key: 11, record: enqueued }, { key: 12, record: enqueued }])], outcomes: [], meta: null });
    const result = new Uint8Array([1, 2, 3]);
    await cost(store, {
      shards: [shardBatch(1, [{ key: 11, record: null }, { key: 12, record: null }])],
      outcomes: [{ id: "1:11", record: { ns: "billing", outcome: "acked", endedAtMs: 2_000, result } }],
      meta: null,
      acked: { endedAtMs: 2_000, namespaces: ["billing"], nsIndexes: [0], shards: [1], keys: [12] },
    });
    const reopened = await session.open(options(url));
    expect([...reopened.loadOutcomes()]).toEqual([{ id: "1:11", record: { ns: "billing", outcome: "acked", endedAtMs: 2_000, result } }]);
    expect([...reopened.loadAckedLog()].map((record) => record.keys)).toEqual([[12]]);
  });

  test("a commit with a meta write runs as a transaction of the commit statement and the meta statement, pipelined", async () => {
    const { store, url } = await fencedStore();
    const withMeta = await cost(store, { shards: [shardBatch(1, [{ key: 5, record: enqueued }])], outcomes: [], meta: { ...store.meta, keysReservedBelow: 10_000 } });
    // BEGIN, the pipeline, COMMIT; the item row and the meta row.
    expect(withMeta).toEqual({ roundTrips: 3, rowWrites: 2, valueBytes: encodeItemRecord(enqueued).length });
    const reopened = await session.open(options(url));
    expect(reopened.readItem(1, 5)).toEqual(enqueued);
    expect(reopened.meta.keysReservedBelow).toBe(10_000);
  });

  test("a patched lease reads back the same after a reopen; rewriting the same value sends nothing", async () => {
    const { store, url } = await fencedStore();
    await cost(store, { shards: [shardBatch(1, [{ key: 3, record: enqueued }])], outcomes: [], meta: null });
    const value = leased(store, 3, 1);
    await cost(store, { shards: [shardBatch(1, [{ key: 3, record: value }])], outcomes: [], meta: null });
    expect(await cost(store, { shards: [shardBatch(1, [{ key: 3, record: value.slice() }])], outcomes: [], meta: null })).toEqual({ roundTrips: 0, rowWrites: 0, valueBytes: 0 });
    const reopened = await session.open(options(url));
    expect(reopened.readItem(1, 3)).toEqual(leasedRecord);
    expect(reopened.readItemBytes(1, 3)).toEqual(store.readItemBytes(1, 3));
  });

  test("a patch the database does not match fails the commit; the key is then written whole", async () => {
    const { store, admin, url } = await fencedStore();
    await cost(store, { shards: [shardBatch(1, [{ key: 4, record: enqueued }])], outcomes: [], meta: null });
    await admin.query("DELETE FROM orq_items WHERE key = 4");
    const value = leased(store, 4, 1);
    const failed = await store.commit({ shards: [shardBatch(1, [{ key: 4, record: value }])], outcomes: [], meta: null });
    expect(failed.failedShards.get(1)?.message).toContain("an item patch wrote fewer rows than it named");
    expect(store.readItem(1, 4)).toEqual(enqueued);
    const whole = await cost(store, { shards: [shardBatch(1, [{ key: 4, record: leased(store, 4, 1) }])], outcomes: [], meta: null });
    expect(whole).toEqual({ roundTrips: 1, rowWrites: 1, valueBytes: value.length });
    const reopened = await session.open(options(url));
    expect(reopened.readItem(1, 4)).toEqual(leasedRecord);
  });
});
