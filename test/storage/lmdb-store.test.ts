// Goal: the LMDB store passes the shared Store suite in both durability
// modes, with and without its ring of recent values (and with one small
// enough to wrap at every commit) (a reopen closes the environment and opens the data dir again), keeps
// the data dir's shard count, and uses one sub-database per shard.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { StoreOpenError } from "../../src/storage/store.ts";
import type { Durability, Store } from "../../src/storage/store.ts";
import { metaDbOptions, metaKey, shardDbOptions } from "../../src/storage/lmdb/lmdb-options.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import { decodeMetaRecord } from "../../src/storage/record-codec.ts";
import { fromHex, itemRecord, v1Values, shardBatch } from "./record-fixtures.ts";
import { loadAll, storeSuite } from "./store-suite.ts";

/** `recentValuesBytes` as the store takes it: undefined for the default ring, 0 for none, small to make it wrap. */
function lmdbHarness(durability: Durability, recentValuesBytes?: number) {
  return async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-lmdb-test-"));
    let shards = 0;
    return {
      open: async (shardCount: number) => {
        shards = shardCount;
        return openLmdbStore({ dataDir, shards, durability, recentValuesBytes });
      },
      reopen: async (store: Store) => {
        await store.close();
        return openLmdbStore({ dataDir, shards, durability, recentValuesBytes });
      },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  };
}

storeSuite("LMDB strict", lmdbHarness("strict"));
storeSuite("LMDB relaxed", lmdbHarness("relaxed"));
storeSuite("LMDB strict, no ring of recent values", lmdbHarness("strict", 0));
storeSuite("LMDB relaxed, a 1 KiB ring of recent values", lmdbHarness("relaxed", 1024));

describe("LMDB data dir", () => {
  test("reopening with another --shards is refused, naming both numbers; the same count still opens", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-lmdb-test-"));
    try {
      const store = await openLmdbStore({ dataDir, shards: 16, durability: "relaxed" });
      await store.commit({ shards: [shardBatch(15, [{ key: 1, record: itemRecord() }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
      await store.close();
      for (const shards of [15, 17]) {
        const attempt = openLmdbStore({ dataDir, shards, durability: "relaxed" });
        await expect(attempt).rejects.toBeInstanceOf(StoreOpenError);
        await expect(openLmdbStore({ dataDir, shards, durability: "relaxed" })).rejects.toThrow(
          `data dir was created with --shards 16 but --shards ${shards} was given`,
        );
      }
      const again = await openLmdbStore({ dataDir, shards: 16, durability: "strict" });
      expect(loadAll(again).get(15)?.length).toBe(1);
      await again.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("the environment holds one sub-database per shard plus meta, outcomes and the acked log", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-lmdb-test-"));
    try {
      const store = await openLmdbStore({ dataDir, shards: 3, durability: "relaxed" });
      await store.commit({ shards: [shardBatch(2, [{ key: 1, record: itemRecord() }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
      await store.close();
      const env = open({ path: join(dataDir, "data.mdb"), noSubdir: true, maxDbs: 8 });
      const names = [...env.getKeys()].map(String).sort();
      await env.close();
      expect(names).toEqual(["acked", "meta", "outcomes", "shard-000", "shard-001", "shard-002"]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a data dir written with record version 1 opens: its meta becomes boot 1 on disk, its items read leaseBoot 0", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-lmdb-test-"));
    try {
      const first = await openLmdbStore({ dataDir, shards: 16, durability: "strict" });
      await first.close();
      // Rewrite the data dir as the version 1 build left it: its meta record and one leased item.
      const env = open({ path: join(dataDir, "data.mdb"), noSubdir: true, maxDbs: 32 });
      await env.openDB<Uint8Array, string>(metaDbOptions()).put(metaKey, fromHex(v1Values.meta));
      await env.openDB<Uint8Array, number>(shardDbOptions(3)).put(7, fromHex(v1Values.leased));
      await env.close();

      const store = await openLmdbStore({ dataDir, shards: 16, durability: "strict" });
      expect(store.meta).toEqual({ formatVersion: 1, shards: 16, nodeId: "a1b2c3d4e5f60718", keysReservedBelow: 20_000, boots: 1 });
      expect(loadAll(store).get(3)).toEqual([
        { key: 7, record: itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 1_700_000_030_000, leaseBoot: 0 }) },
      ]);
      await store.close();
      // The boot was committed at open, in the current record version.
      const check = open({ path: join(dataDir, "data.mdb"), noSubdir: true, maxDbs: 32 });
      const stored = check.openDB<Uint8Array, string>(metaDbOptions()).getBinary(metaKey);
      await check.close();
      expect(stored?.[0]).toBe(RECORD_VERSION);
      expect(decodeMetaRecord(stored as Uint8Array).boots).toBe(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("--shards must be 1..4096", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-lmdb-test-"));
    try {
      await expect(openLmdbStore({ dataDir, shards: 0, durability: "relaxed" })).rejects.toThrow("--shards must be an integer from 1 to 4096, got 0");
      await expect(openLmdbStore({ dataDir, shards: 4097, durability: "relaxed" })).rejects.toThrow("got 4097");
      const store = await openLmdbStore({ dataDir, shards: 1, durability: "relaxed" });
      expect(store.shardCount).toBe(1);
      await store.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
