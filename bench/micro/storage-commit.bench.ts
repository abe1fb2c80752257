// LMDB commit cost by batch size (1, 100, 1,000 item records of ~100-byte
// payloads) in strict (fsync per commit) and relaxed (no fsync) mode, through
// LmdbStore.commit, records encoded by the record codec.
// Expected (2-core shared box, mitata averages;
// docs/decisions/012-group-commit.md): strict 1 record 0.33-0.41 ms, relaxed
// 1 record 84-150 µs; 100 records 0.8-0.9 ms strict, 0.32-0.43 ms relaxed;
// 1,000 records 2.0-2.7 ms strict, 1.4-1.9 ms relaxed: past ~100 records per
// commit the per-record cost dominates and the fsync amortises away.
// Run: ./node_modules/.bin/bun bench/micro/storage-commit.bench.ts

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bench, group, run, summary } from "mitata";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { ItemRecord } from "../../src/storage/record.ts";
import type { CommitBatch, Durability, Store } from "../../src/storage/store.ts";
import { pendingItemRecord } from "../../test/storage/record-fixtures.ts";

/** Keys cycle below this so the database stays a fixed size however long mitata runs. */
const keySpace = 200_000;
const shards = 16;

function record(index: number): ItemRecord {
  return pendingItemRecord("bench", `topic-${index % 10}`, index % 100, new Uint8Array(100).fill(index & 0xff), 1_700_000_000_000 + index);
}

const dirs: string[] = [];
const stores = new Map<Durability, Store>();
for (const durability of ["strict", "relaxed"] as const) {
  const dataDir = mkdtempSync(join(tmpdir(), `orq-bench-${durability}-`));
  dirs.push(dataDir);
  stores.set(durability, await openLmdbStore({ dataDir, shards, durability }));
}

let nextKey = 0;
function batchOf(size: number): CommitBatch {
  const perShard = new Map<number, CommitBatch["shards"][number]>();
  for (let index = 0; index < size; index++) {
    const key = nextKey++ % keySpace;
    const shard = key % shards;
    let shardBatch = perShard.get(shard);
    if (shardBatch === undefined) {
      shardBatch = { shard, keys: [], records: [] };
      perShard.set(shard, shardBatch);
    }
    shardBatch.keys.push(key);
    shardBatch.records.push(record(key));
  }
  return { shards: [...perShard.values()], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
}

for (const size of [1, 100, 1000]) {
  group(`commit of ${size} record(s)`, () => {
    summary(() => {
      for (const durability of ["strict", "relaxed"] as const) {
        const store = stores.get(durability) as Store;
        bench(`${durability} ${size}`, async () => {
          const result = await store.commit(batchOf(size));
          if (result.failedShards.size > 0) throw new Error("commit failed");
        });
      }
    });
  });
}

await run();
for (const store of stores.values()) await store.close();
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
