// Goal: the in-memory store passes the shared Store suite (a "reopen" is a
// crash: durableCopy keeps only what committed), and its fault injection does
// what storage tests rely on: failed shards, held commits, crash copies.

import { describe, expect, test } from "bun:test";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { Store } from "../../src/storage/store.ts";
import { itemRecord, shardBatch } from "./record-fixtures.ts";
import { loadAll, storeSuite } from "./store-suite.ts";

storeSuite("MemoryStore", async () => ({
  open: async (shards: number) => new MemoryStore({ shards }),
  reopen: async (store: Store) => (store as MemoryStore).durableCopy(),
  cleanup: async () => {},
}));

describe("MemoryStore fault injection", () => {
  test("a failed shard reports its error and keeps its old state; other shards and outcomes commit", async () => {
    const store = new MemoryStore({ shards: 3 });
    const injected = new Error("disk on fire");
    store.failShard(1, injected);
    const result = await store.commit({
      shards: [
        shardBatch(0, [{ key: 1, record: itemRecord() }]),
        shardBatch(1, [{ key: 2, record: itemRecord() }]),
      ],
      outcomes: [{ id: "0:9", record: { ns: "n", outcome: "acked", endedAtMs: 1 } }],
      meta: null,
      acked: null,
      ackedPurgeBeforeMs: null,
    });
    expect(result.failedShards).toEqual(new Map([[1, injected]]));
    expect(result.metaError).toBeNull();
    expect(loadAll(store).get(0)?.length).toBe(1);
    expect(loadAll(store).get(1)).toEqual([]);
    expect([...store.loadOutcomes()].length).toBe(1);

    store.healShard(1);
    const healed = await store.commit({ shards: [shardBatch(1, [{ key: 2, record: itemRecord() }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
    expect(healed.failedShards.size).toBe(0);
    expect(loadAll(store).get(1)?.length).toBe(1);
  });

  test("a held commit is not durable: durableCopy taken meanwhile lacks it", async () => {
    const store = new MemoryStore({ shards: 1 });
    store.pauseCommits();
    let settled = false;
    const pending = store.commit({ shards: [shardBatch(0, [{ key: 1, record: itemRecord() }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
    void pending.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    const crashed = store.durableCopy();
    store.resumeCommits();
    await pending;
    expect(loadAll(crashed).get(0)).toEqual([]);
    expect(loadAll(store).get(0)?.length).toBe(1);
    expect(store.commitHistory).toEqual([{ shards: [0], items: 1, itemValues: 0, outcomes: 0, acked: 0, meta: false }]);
  });

  test("shard numbers are checked: shardCount-1 is fine, shardCount is a programmer error", async () => {
    const store = new MemoryStore({ shards: 2 });
    store.failShard(1);
    expect(() => store.failShard(2)).toThrow("shard 2 out of range");
    expect(() => store.commit({ shards: [shardBatch(2, [])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null })).toThrow("out of range");
  });
});
