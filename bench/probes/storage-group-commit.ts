// Group commit under concurrency: C simulated clients each write one item
// (~100-byte payload) through the GroupCommitter to an LMDB store and wait for
// it to be durable, then write the next. Prints write sets/s, write sets per
// commit and commit time (p50/p99) per concurrency and durability mode.
// Expected: strict at C=1 is fsync-bound (~2-3 k/s at ~0.3-0.5 ms per
// commit); as C grows each commit carries about C write sets and throughput
// climbs toward the JS cost of a put (measured earlier: 100-370 k items/s).
// With `postgres` as the second argument the same clients write to the
// PostgreSQL store (cluster mode's) on a fresh local PostgreSQL 15 with fsync
// on, over loopback TCP: one commit is one transaction.
// Run: ./node_modules/.bin/bun bench/probes/storage-group-commit.ts [seconds per run] [lmdb|postgres]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/lib/clock.ts";
import { quantile } from "../../src/storage/commit-stats.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.ts";
import type { Durability, Store } from "../../src/storage/store.ts";
import { startPostgres } from "../../test/support/postgres-server.ts";
import type { ItemRecord } from "../../src/storage/record.ts";
import { pendingItemRecord } from "../../test/storage/record-fixtures.ts";

const secondsPerRun = Number(process.argv[2] ?? 2);
const backend = process.argv[3] === "postgres" ? "postgres" : "lmdb";
const pg = backend === "postgres" ? await startPostgres({ fsync: true }) : null;

async function openStore(dataDir: string, durability: Durability): Promise<Store> {
  if (pg === null) return await openLmdbStore({ dataDir, shards, durability });
  const url = await pg.createDatabase(`bench_${durability}`);
  return await openPostgresStore({ url, shards, shardsDefault: shards, durability, keyRangePerOpen: null, loadAllShards: true, applicationName: "orq-bench", transactionIdleTimeoutMs: null });
}
const shards = 16;
const stopwatch = { nowMs: () => performance.now() };

function record(key: number): ItemRecord {
  return pendingItemRecord("bench", `topic-${key % 10}`, key % 100, new Uint8Array(100).fill(key & 0xff), 1_700_000_000_000);
}

for (const durability of ["strict", "relaxed"] as const) {
  for (const concurrency of [1, 10, 100, 1000]) {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-group-commit-"));
    const store = await openStore(dataDir, durability);
    const writer = new GroupCommitter(store, { clock: systemClock, stopwatch });
    const deadlineMs = performance.now() + secondsPerRun * 1000;
    let done = 0;
    const client = async (): Promise<void> => {
      while (performance.now() < deadlineMs) {
        const key = writer.nextKey();
        const set = writer.begin();
        set.putItem(key % shards, key, record(key));
        await set.end();
        done++;
      }
    };
    const startMs = performance.now();
    await Promise.all(Array.from({ length: concurrency }, client));
    await writer.drain();
    const seconds = (performance.now() - startMs) / 1000;
    const stats = writer.commitStats();
    console.log(
      `${backend} ${durability.padEnd(7)} C=${String(concurrency).padStart(4)}: ${Math.round(done / seconds).toLocaleString("en-US").padStart(8)} writes/s, ` +
        `${stats.commitsTotal} commits, sets/commit p50 ${quantile(stats.writeSetsPerCommit, 0.5)} p99 ${quantile(stats.writeSetsPerCommit, 0.99)}, ` +
        `commit ms p50 ${quantile(stats.commitMs, 0.5).toFixed(2)} p99 ${quantile(stats.commitMs, 0.99).toFixed(2)}`,
    );
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
pg?.stop();
