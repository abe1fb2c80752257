// Goal: the PostgreSQL store passes the shared Store suite against a real
// PostgreSQL (a "reopen" closes the store and opens the database again), and
// does what cluster mode relies on: a failed transaction changes nothing (in
// the database or in this process's copy), durability maps to
// synchronous_commit, a paused commit cannot hold its locks forever
// (idle_in_transaction_session_timeout), opens are counted across processes, key ranges per open
// never overlap, a second single writer is refused, a new key is inserted
// rather than upserted (so a row the copy does not know fails the commit
// instead of being overwritten), and opening a database
// made with another shard count or an unreachable one fails with one line.
// A stored schedule keeps the shard it was written under.
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clusterLimits } from "../../../src/limits.ts";
import { encodeItemRecord } from "../../../src/storage/record-codec.ts";
import { ShardCountMismatchError } from "../../../src/storage/postgres/schema.ts";
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";
import type { SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import type { ScheduleRecord } from "../../../src/storage/record.ts";
import { StoreOpenError, type Store } from "../../../src/storage/store.ts";
import { postgresAvailable, releasePostgres, sharedPostgres, type PostgresServer } from "../../support/postgres-server.ts";
import { itemRecord, outcomeRecord, shardBatch } from "../record-fixtures.ts";
import { loadAll, storeSuite } from "../store-suite.ts";
import { storeOptions } from "./store-options.ts";
import { scheduleRecord } from "./schedule-record.ts";
import { storeSession } from "./store-session.ts";

const available = postgresAvailable();

function options(url: string, extra: Partial<PostgresStoreOptions> = {}): PostgresStoreOptions {
  return storeOptions(url, { shardsDefault: 4, keyRangePerOpen: null, loadAllShards: true, ...extra });
}

if (available) {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await sharedPostgres();
  });
  afterAll(() => releasePostgres());
  storeSuite("PostgresStore", async () => {
    let url = "";
    return {
      open: async (shards: number) => {
        url = await pg.createDatabase("suite");
        return await openPostgresStore(options(url, { shards }));
      },
      reopen: async (store: Store) => {
        await store.close();
        return await openPostgresStore(options(url, { shards: store.shardCount }));
      },
      cleanup: async () => {},
      ackedAs: "log-by-shard" as const,
    };
  });
}

describe.skipIf(!available)("PostgresStore in particular", () => {
  const session = storeSession();

  async function open(url: string, extra: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
    return await session.open(options(url, extra));
  }

  function admin(url: string): SqlClient {
    return session.admin(url);
  }

  test("strict durability runs with synchronous_commit on, relaxed with it off", async () => {
    const url = await session.server().createDatabase("durability");
    expect(await (await open(url, { durability: "strict" })).setting("synchronous_commit")).toBe("on");
    expect(await (await open(url, { durability: "relaxed" })).setting("synchronous_commit")).toBe("off");
  });

  test("a session idle inside a transaction past the timeout is ended by PostgreSQL", async () => {
    const url = await session.server().createDatabase("idle_timeout");
    const store = await open(url, { transactionIdleTimeoutMs: 1500 });
    expect(await store.setting("idle_in_transaction_session_timeout")).toBe("1500ms");
    expect(await (await open(url)).setting("idle_in_transaction_session_timeout")).toBe("0");
  });

  test("a transaction that fails changes nothing, here or in the database; later commits go through", async () => {
    const url = await session.server().createDatabase("failed_tx");
    const store = await open(url, { shards: 2 });
    const first = itemRecord({ priority: 1 });
    expect((await store.commit({ shards: [shardBatch(0, [{ key: 1, record: first }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null })).failedShards.size).toBe(0);
    // A trigger makes any write of key 666 fail inside the transaction.
    const sql = admin(url);
    await sql.query(`CREATE FUNCTION refuse_666() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.key = 666 THEN RAISE EXCEPTION 'refused key 666'; END IF; RETURN NEW; END $$`);
    await sql.query("CREATE TRIGGER refuse_666 BEFORE INSERT OR UPDATE ON orq_items FOR EACH ROW EXECUTE FUNCTION refuse_666()");
    const changed = itemRecord({ priority: 2 });
    const result = await store.commit({
      shards: [
        shardBatch(0, [{ key: 1, record: changed }]),
        shardBatch(1, [{ key: 666, record: itemRecord() }]),
      ],
      outcomes: [{ id: "0:9", record: outcomeRecord() }],
      meta: null,
    });
    expect([...result.failedShards.keys()].sort()).toEqual([0, 1]);
    expect(result.metaError?.message).toContain("refused key 666");
    expect(store.readItem(0, 1)).toEqual(first);
    expect([...store.loadOutcomes()]).toEqual([]);
    const reopened = await open(url);
    expect(reopened.readItem(0, 1)).toEqual(first);
    expect(reopened.readItem(1, 666)).toBeNull();
    const next = await store.commit({ shards: [shardBatch(0, [{ key: 1, record: changed }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
    expect(next.failedShards.size).toBe(0);
    expect(store.readItem(0, 1)).toEqual(changed);
  });

  test("a new key is inserted, not upserted: a row the copy does not know fails the commit and stays as it was; the key's next write, now uncertain, is an upsert", async () => {
    const url = await session.server().createDatabase("insert_new");
    const store = await open(url, { shards: 2 });
    const stranger = encodeItemRecord(itemRecord({ priority: 77 }));
    // A row behind the store's back (nothing of orq writes one; a copy that missed a row would look like this).
    const sql = admin(url);
    await sql.query("INSERT INTO orq_items (shard, key, value) VALUES (0, 5, $1)", [stranger]);
    const mine = itemRecord({ priority: 3 });
    const batch = () => ({ shards: [shardBatch(0, [{ key: 5, record: mine }]), shardBatch(1, [{ key: 6, record: mine }])], outcomes: [], meta: null });
    const failed = await store.commit(batch());
    expect([...failed.failedShards.keys()].sort()).toEqual([0, 1]);
    expect(failed.metaError?.message).toContain("duplicate key");
    const [row] = await sql.query("SELECT value FROM orq_items WHERE shard = 0 AND key = 5");
    expect([...new Uint8Array(row?.[0] as Uint8Array)]).toEqual([...stranger]);
    expect(store.readItem(1, 6)).toBeNull();
    // Both keys are uncertain now: written whole as upserts, the commit lands and the copy matches the rows.
    const landed = await store.commit(batch());
    expect(landed.failedShards.size).toBe(0);
    expect(store.readItem(0, 5)).toEqual(mine);
    const reopened = await open(url);
    expect([reopened.readItem(0, 5), reopened.readItem(1, 6)]).toEqual([mine, mine]);
  });

  test("a stored schedule keeps its shard: a write or delete under another shard leaves its row alone; readScheduleShard finds it", async () => {
    const url = await session.server().createDatabase("schedule_shard");
    const store = await open(url, { shards: 4 });
    const commit = (shard: number, value: ScheduleRecord | null) =>
      store.commit({ shards: [], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null, schedules: [{ ns: "n", name: "a", shard, record: value }] });
    expect(await store.readScheduleShard("n", "a")).toBeNull();
    await commit(1, scheduleRecord(null));
    expect(await store.readScheduleShard("n", "a")).toBe(1);
    // Another shard's write or delete of the same name changes nothing: a schedule never moves by a write.
    await commit(2, scheduleRecord(7000));
    await commit(3, null);
    expect(await store.readScheduleShard("n", "a")).toBe(1);
    expect((await store.readSchedules("n", null, 10)).map((each) => each.lastAtMs)).toEqual([null]);
    await commit(1, scheduleRecord(8000));
    expect((await store.readSchedules("n", null, 10)).map((each) => each.lastAtMs)).toEqual([8000]);
    await commit(1, null);
    expect(await store.readScheduleShard("n", "a")).toBeNull();
  });

  test("every open counts a boot, across processes sharing the database", async () => {
    const url = await session.server().createDatabase("boots");
    const boots = [];
    for (let i = 0; i < 3; i++) boots.push((await open(url)).meta.boots);
    expect(boots).toEqual([1, 2, 3]);
  });

  test("cluster key ranges: each open gets its own; a reservation inside it writes nothing, one beyond it fails", async () => {
    const url = await session.server().createDatabase("key_ranges");
    const a = await open(url, { keyRangePerOpen: 1_000_000 });
    const b = await open(url, { keyRangePerOpen: 1_000_000 });
    expect(a.meta.keysReservedBelow).toBe(0);
    expect(b.meta.keysReservedBelow).toBe(1_000_000);
    const inside = await a.commit({ shards: [], outcomes: [], meta: { ...a.meta, keysReservedBelow: 1_000_000 } });
    expect(inside.metaError).toBeNull();
    const beyond = await a.commit({ shards: [], outcomes: [], meta: { ...a.meta, keysReservedBelow: 1_000_001 } });
    expect(beyond.metaError?.message).toContain("used up");
    const c = await open(url, { keyRangePerOpen: 1_000_000 });
    expect(c.meta.keysReservedBelow).toBe(2_000_000);
  });

  test("a second single writer's key reservation is refused rather than overlapping the first's", async () => {
    const url = await session.server().createDatabase("two_writers");
    const a = await open(url);
    const b = await open(url);
    expect((await a.commit({ shards: [], outcomes: [], meta: { ...a.meta, keysReservedBelow: 10_000 } })).metaError).toBeNull();
    const refused = await b.commit({ shards: [shardBatch(0, [{ key: 0, record: itemRecord() }])], outcomes: [], meta: { ...b.meta, keysReservedBelow: 10_000 } });
    expect(refused.metaError?.message).toContain("another process reserved item keys");
    expect(refused.failedShards.has(0)).toBe(true);
    expect(b.readItem(0, 0)).toBeNull();
  });

  test("the shard count comes from the database; an explicit different one is refused", async () => {
    const url = await session.server().createDatabase("shard_count");
    expect((await open(url, { shards: 6 })).shardCount).toBe(6);
    expect((await open(url, { shards: null })).shardCount).toBe(6);
    expect((await open(url, { shards: 6 })).shardCount).toBe(6);
    const mismatch = openPostgresStore(options(url, { shards: 8 }));
    await expect(mismatch).rejects.toThrow(ShardCountMismatchError);
    await expect(mismatch).rejects.toThrow("created with --shards 6 but --shards 8");
    const fresh = await session.server().createDatabase("shard_default");
    expect((await open(fresh, { shards: null, shardsDefault: 5 })).shardCount).toBe(5);
  });

  test("an unreachable database fails the open with one line, password hidden", async () => {
    const url = `postgres://orq:secret@127.0.0.1:${session.server().port}/no_such_database`;
    const attempt = openPostgresStore(options(url));
    await expect(attempt).rejects.toThrow(StoreOpenError);
    const message = await attempt.then(
      () => "",
      (error: Error) => error.message,
    );
    expect(message).toContain("postgres://orq:***@127.0.0.1");
    expect(message).not.toContain("secret");
    expect(message).not.toContain("\n");
  });

  test("adopting a shard of more rows than a page reads every page, each row once, in key order", async () => {
    const url = await session.server().createDatabase("adopt_pages");
    await open(url, { shards: 2 }); // creates the schema
    const value = encodeItemRecord(itemRecord());
    const rows = 2 * clusterLimits.loadPageRows + 3;
    // Straight into the table (a commit of 10,000 puts would take longer): keys 1, 3, 5, ... on shard 1, and one on shard 0.
    await admin(url).query("INSERT INTO orq_items (shard, key, value) SELECT 1, 2 * k - 1, $1::bytea FROM generate_series(1, $2::integer) AS k UNION ALL SELECT 0, 2, $1::bytea", [value, rows]);
    const partial = await open(url, { loadAllShards: false });
    await partial.adoptShard(1);
    const keys = loadAll(partial).get(1)?.map((entry) => entry.key) ?? [];
    expect(keys.length).toBe(rows);
    expect(keys.every((key, index) => key === 2 * index + 1)).toBe(true);
    expect(partial.hasShard(0)).toBe(false);
    expect(partial.readItemBytes(1, 2 * rows - 1)).toEqual(value);
  });

  test("a store serving no shards loads one on adopt and forgets it on drop", async () => {
    const url = await session.server().createDatabase("adopt");
    const writer = await open(url, { shards: 3 });
    await writer.commit({
      shards: [shardBatch(2, [{ key: 5, record: itemRecord() }, { key: 4, record: itemRecord({ priority: 3 }) }])],
      outcomes: [{ id: "2:1", record: outcomeRecord() }, { id: "1:1", record: outcomeRecord() }],
      meta: null,
    });
    const partial = await open(url, { loadAllShards: false });
    expect(partial.hasShard(2)).toBe(false);
    expect(partial.readItem(2, 5)).toBeNull();
    await partial.adoptShard(2);
    expect(partial.hasShard(2)).toBe(true);
    expect(loadAll(partial).get(2)?.map((entry) => entry.key)).toEqual([4, 5]);
    expect([...partial.loadOutcomes()].map((entry) => entry.id)).toEqual(["2:1"]);
    partial.dropShard(2);
    expect(partial.readItem(2, 5)).toBeNull();
    expect([...partial.loadOutcomes()]).toEqual([]);
  });
});
