// Recovery in turns against recovery in one go: builds an LMDB store of N
// ready items (100-byte payloads, 16 shards), then recovers an engine from it
// both ways, alternating, and prints each duration and how long each phase of
// the stepped run took (for recovery-log.ts's rate estimate).
// Run: ./node_modules/.bin/bun bench/recovery-turns.ts [items] [rounds]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine, type RecoveryProgress } from "../src/engine/engine.ts";
import { systemClock } from "../src/lib/clock.ts";
import { defaultLimits } from "../src/limits.ts";
import { GroupCommitter } from "../src/storage/group-commit.ts";
import { openLmdbStore } from "../src/storage/lmdb/lmdb-store.ts";
import type { CommitBatch } from "../src/storage/store.ts";
import { pendingItemRecord, shardBatch } from "../test/storage/record-fixtures.ts";

const itemCount = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 3);
const shards = 16;
const dataDir = mkdtempSync(join(tmpdir(), "orq-recovery-turns-"));
const stopwatch = { nowMs: () => performance.now() };

try {
  const seed = await openLmdbStore({ dataDir, shards, durability: "relaxed" });
  for (let start = 0; start < itemCount; start += 10_000) {
    const batch: CommitBatch = { shards: Array.from({ length: shards }, (_, shard) => shardBatch(shard, [])), outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
    for (let index = start; index < Math.min(itemCount, start + 10_000); index++) {
      const shardBatch = batch.shards[index % shards]!;
      shardBatch.keys.push(index);
      shardBatch.records.push(pendingItemRecord("bench", `topic-${index % 100}`, index % 1000, new Uint8Array(100), 1_700_000_000_000));
    }
    await seed.commit(batch);
  }
  await seed.close();

  for (let round = 0; round < rounds; round++) {
    for (const mode of ["one go", "in turns"] as const) {
      const store = await openLmdbStore({ dataDir, shards, durability: "relaxed" });
      const writer = new GroupCommitter(store, { clock: systemClock, stopwatch });
      const options = { store, writer, limits: defaultLimits, namespaces: {}, nowMs: Date.now() };
      Bun.gc(true);
      const startedMs = performance.now();
      const phaseEndsMs = new Map<RecoveryProgress["phase"], number>();
      let engine: Engine;
      if (mode === "one go") {
        engine = Engine.recover(options);
      } else {
        const steps = Engine.recoverInSteps(options);
        for (;;) {
          const next = steps.next();
          if (next.done === true) {
            engine = next.value;
            break;
          }
          phaseEndsMs.set(next.value.phase, performance.now() - startedMs);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      const totalMs = performance.now() - startedMs;
      const phases = [...phaseEndsMs].map(([phase, endMs]) => `${phase} until ${endMs.toFixed(0)} ms`).join(", ");
      console.log(`${mode}: ${engine.itemCount} items in ${totalMs.toFixed(0)} ms${phases === "" ? "" : ` (${phases})`}`);
      await writer.drain();
      await store.close();
    }
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
