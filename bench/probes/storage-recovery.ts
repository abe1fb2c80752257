// Recovery read: how long a restart takes to read back 1,000,000 stored items
// (~100-byte payloads, 16 shards) with loadShards + record decode, the work
// the engine's recovery does before it rebuilds its heaps.
// Expected: about 1-2 s (LMDB cursor plus a hand-written decode of ~1 µs per
// item); over 5 s means the codec or the key format regressed.
// Run: ./node_modules/.bin/bun bench/probes/storage-recovery.ts [items]

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { ItemRecord } from "../../src/storage/record.ts";
import type { CommitBatch } from "../../src/storage/store.ts";
import { pendingItemRecord, shardBatch } from "../../test/storage/record-fixtures.ts";

const itemCount = Number(process.argv[2] ?? 1_000_000);
const shards = 16;
const commitRecords = 10_000;

function record(index: number): ItemRecord {
  return pendingItemRecord("bench", `topic-${index % 100}`, index % 1000, new Uint8Array(100).fill(index & 0xff), 1_700_000_000_000 + index);
}

const dataDir = mkdtempSync(join(tmpdir(), "orq-recovery-"));
try {
  const writeStart = performance.now();
  const store = await openLmdbStore({ dataDir, shards, durability: "relaxed" });
  for (let start = 0; start < itemCount; start += commitRecords) {
    const batch: CommitBatch = { shards: Array.from({ length: shards }, (_, shard) => shardBatch(shard, [])), outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
    for (let index = start; index < Math.min(itemCount, start + commitRecords); index++) {
      batch.shards[index % shards]?.keys.push(index);
      batch.shards[index % shards]?.records.push(record(index));
    }
    const result = await store.commit(batch);
    if (result.failedShards.size > 0) throw new Error("commit failed");
  }
  await store.close();
  const writeSeconds = (performance.now() - writeStart) / 1000;
  const fileBytes = statSync(join(dataDir, "data.mdb")).size;

  const readStart = performance.now();
  const reopened = await openLmdbStore({ dataDir, shards, durability: "strict" });
  let loaded = 0;
  let payloadBytes = 0;
  for (const shard of reopened.loadShards()) {
    for (const { record: item } of shard.items) {
      loaded++;
      payloadBytes += item.payload.length;
    }
  }
  const readSeconds = (performance.now() - readStart) / 1000;
  await reopened.close();
  if (loaded !== itemCount) throw new Error(`loaded ${loaded} of ${itemCount}`);
  console.log(`items ${itemCount}, data.mdb ${(fileBytes / 2 ** 20).toFixed(0)} MiB, payload ${(payloadBytes / 2 ** 20).toFixed(0)} MiB`);
  console.log(`write (relaxed, ${commitRecords}-record commits): ${writeSeconds.toFixed(2)} s`);
  console.log(`recovery read (open + loadShards + decode): ${readSeconds.toFixed(2)} s, ${((readSeconds * 1e6) / itemCount).toFixed(2)} µs/item`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
