// Goal: a shard read ahead of its claim (PostgresStore.readShardAhead) is
// kept by adoptShard only when nothing of the shard changed since the read
// began, and what the store then holds equals a fresh load in every case. A
// seeded run reads shard 1 ahead, lets its "old owner" change one thing
// (insert, update, delete, a delete and an insert that keep the count, an
// outcome written or deleted, a schedule rewritten, an acked block written,
// a commit through the store itself) or nothing, or change only shard 0,
// then adopts: the read is kept exactly when shard 1 did not change (and
// adoptShard says so), and the items, outcomes, schedules and acked log equal
// those a new store loads. What the store hands an engine to file ahead of
// the claim (storedShardAhead) equals what it hands once the read is kept.
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { encodeItemRecord, encodeOutcomeRecord } from "../../../src/storage/record-codec.ts";
import type { PostgresStore, PostgresStoreOptions } from "../../../src/storage/postgres/postgres-store.ts";
import type { StoredShard } from "../../../src/storage/store.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { itemRecord, outcomeRecord, shardBatch } from "../record-fixtures.ts";
import { loadAll } from "../store-suite.ts";
import { storeOptions } from "./store-options.ts";
import { scheduleRecord } from "./schedule-record.ts";
import { storeSession } from "./store-session.ts";

const available = postgresAvailable();


/** Everything a store holds of shard 1, comparable with toEqual. */
function shardState(store: PostgresStore) {
  return {
    items: loadAll(store).get(1) ?? [],
    outcomes: [...store.loadOutcomes()].filter((outcome) => outcome.id.startsWith("1:")).sort((a, b) => a.id.localeCompare(b.id)),
    schedules: [...store.loadSchedules()],
    acked: [...store.loadAckedLog()],
  };
}

/** A StoredShard with its iterables read into arrays (null stays null). */
function materialized(stored: StoredShard | null) {
  if (stored === null) return null;
  return { shard: stored.shard, items: [...stored.items], outcomes: [...stored.outcomes], ackedLog: [...stored.ackedLog], schedules: [...stored.schedules] };
}

describe.skipIf(!available)("a shard read ahead of its claim", () => {
  const session = storeSession();

  async function open(url: string, extra: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
    return await session.open(storeOptions(url, { shards: 2, shardsDefault: 2, keyRangePerOpen: null, loadAllShards: false, ...extra }));
  }

  test("seeded: kept exactly when the shard did not change, and equal to a fresh load either way", async () => {
    for (const seed of [1, 2, 3]) {
      const url = await session.server().createDatabase(`read_ahead_${seed}`);
      // The old owner: it writes through the store as a node does, and its rows are also changed by hand below.
      const owner = await open(url, { loadAllShards: true });
      const admin = session.admin(url);
      await owner.commit({
        shards: [shardBatch(1, Array.from({ length: 40 }, (_, i) => ({ key: 2 * i + 1, record: itemRecord({ priority: i }) }))), shardBatch(0, [{ key: 2, record: itemRecord() }])],
        outcomes: [{ id: "1:1001", record: outcomeRecord() }],
        meta: null,
        acked: null,
        ackedPurgeBeforeMs: null,
        schedules: [{ ns: "n", name: "a", shard: 1, record: scheduleRecord(null) }],
      });
      // An acked block of shard 1 (keys acked earlier, their rows gone).
      await owner.commit({ shards: [], outcomes: [], meta: null, acked: { endedAtMs: 100_000, namespaces: ["n"], nsIndexes: [0, 0], shards: [1, 1], keys: [901, 903] }, ackedPurgeBeforeMs: null });
      const reader = await open(url);
      const random = seededRandom(seed);
      let nextKey = 1_001;
      let expectKept = 0;
      let expectReadAgain = 0;
      const changes: Array<{ name: string; changes: boolean; run: () => Promise<unknown> }> = [
        { name: "nothing", changes: false, run: async () => {} },
        { name: "shard 0 only", changes: false, run: () => admin.query("INSERT INTO orq_items (shard, key, value) VALUES (0, $1, $2)", [nextKey++ * 2, encodeItemRecord(itemRecord())]) },
        { name: "insert", changes: true, run: () => admin.query("INSERT INTO orq_items (shard, key, value) VALUES (1, $1, $2)", [nextKey++ * 2 + 1, encodeItemRecord(itemRecord())]) },
        { name: "update", changes: true, run: () => admin.query("UPDATE orq_items SET value = $1 WHERE shard = 1 AND key = (SELECT min(key) FROM orq_items WHERE shard = 1)", [encodeItemRecord(itemRecord({ priority: 99 }))]) },
        { name: "update to the same bytes", changes: true, run: () => admin.query("UPDATE orq_items SET value = value WHERE shard = 1 AND key = (SELECT max(key) FROM orq_items WHERE shard = 1)") },
        { name: "delete", changes: true, run: () => admin.query("DELETE FROM orq_items WHERE shard = 1 AND key = (SELECT min(key) FROM orq_items WHERE shard = 1)") },
        {
          name: "delete and insert",
          changes: true,
          run: () =>
            admin.query("WITH gone AS (DELETE FROM orq_items WHERE shard = 1 AND key = (SELECT min(key) FROM orq_items WHERE shard = 1)) INSERT INTO orq_items (shard, key, value) VALUES (1, $1, $2)", [
              nextKey++ * 2 + 1,
              encodeItemRecord(itemRecord()),
            ]),
        },
        { name: "outcome written", changes: true, run: () => admin.query("INSERT INTO orq_outcomes (id, shard, value) VALUES ($1, 1, $2)", [`1:${nextKey++ * 2 + 1}`, encodeOutcomeRecord(outcomeRecord())]) },
        { name: "outcome deleted", changes: true, run: () => admin.query("DELETE FROM orq_outcomes WHERE id = (SELECT min(id) FROM orq_outcomes WHERE shard = 1)") },
        { name: "schedule rewritten", changes: true, run: () => admin.query("UPDATE orq_schedules SET value = value WHERE shard = 1") },
        { name: "acked block rewritten", changes: true, run: () => admin.query("UPDATE orq_acked SET value = value WHERE shard = 1") },
        {
          name: "a commit of the store",
          changes: true,
          run: () =>
            owner.commit({
              shards: [shardBatch(1, [{ key: nextKey++ * 2 + 1, record: itemRecord({ priority: 7 }) }])],
              outcomes: [],
              meta: null,
              acked: null,
              ackedPurgeBeforeMs: null,
            }),
        },
      ];
      for (let round = 0; round < 24; round++) {
        const change = changes[Math.floor(random() * changes.length)] as (typeof changes)[number];
        await reader.readShardAhead(1);
        expect(reader.shardsReadAhead()).toEqual([1]);
        expect(reader.hasShard(1)).toBe(false);
        // What an engine files ahead of the claim (decisions/053): the read, as storedShard hands a loaded shard over.
        const read = reader.storedShardAhead(1);
        const ahead = materialized(read?.stored ?? null);
        expect(read?.read).toBe(reader.readAheadOf(1) ?? undefined);
        await change.run();
        // adoptShard names the read it kept: the one handed out for filing, or none.
        expect(await reader.adoptShard(1)).toBe(change.changes ? null : (read?.read ?? null));
        expect(reader.storedShardAhead(1)).toBe(null);
        if (change.changes) expectReadAgain++;
        else expectKept++;
        if (!change.changes) expect(ahead).toEqual(materialized(reader.storedShard(1)));
        expect({ round, change: change.name, counts: reader.readAheadCounts() }).toEqual({ round, change: change.name, counts: { kept: expectKept, readAgain: expectReadAgain } });
        const fresh = await open(url);
        await fresh.adoptShard(1);
        expect(shardState(reader)).toEqual(shardState(fresh));
        await fresh.close();
        reader.dropShard(1);
        // Keep the shard's rows from running out for the deletes.
        const items = await admin.query("SELECT count(*) FROM orq_items WHERE shard = 1");
        if (Number(items[0]?.[0]) < 40) await admin.query("INSERT INTO orq_items (shard, key, value) VALUES (1, $1, $2)", [nextKey++ * 2 + 1, encodeItemRecord(itemRecord())]);
        const outcomes = await admin.query("SELECT count(*) FROM orq_outcomes WHERE shard = 1");
        if (Number(outcomes[0]?.[0]) < 2) await admin.query("INSERT INTO orq_outcomes (id, shard, value) VALUES ($1, 1, $2)", [`1:${nextKey++ * 2 + 1}`, encodeOutcomeRecord(outcomeRecord())]);
      }
      expect(expectKept).toBeGreaterThan(0);
      expect(expectReadAgain).toBeGreaterThan(0);
    }
  }, 120_000);

  test("a read ahead let go is not used, and a shard held is not read ahead", async () => {
    const url = await session.server().createDatabase("read_ahead_forget");
    const owner = await open(url, { loadAllShards: true });
    await owner.commit({ shards: [shardBatch(1, [{ key: 1, record: itemRecord() }])], outcomes: [], meta: null });
    const reader = await open(url);
    await reader.readShardAhead(1);
    reader.forgetShardAhead(1);
    expect(reader.shardsReadAhead()).toEqual([]);
    await reader.adoptShard(1);
    expect(reader.readAheadCounts()).toEqual({ kept: 0, readAgain: 0 });
    await reader.readShardAhead(1);
    expect(reader.shardsReadAhead()).toEqual([]);
    expect(loadAll(reader).get(1)?.map((entry) => entry.key)).toEqual([1]);
  });
});
