// Goal: the LMDB store deletes acked records later, lowest keys first
// (storage/lmdb/ack-sweep.ts), and never lets one come back: a load skips an
// acked record still on disk, a restart after SIGKILL deletes what the sweep
// had left, close() and a purge of the acked log delete what they must.

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ByteWriter } from "../../src/storage/byte-cursor.ts";
import { type AckedLogRecord, appendAckedLog } from "../../src/storage/acked-log.ts";
import { AckSweep, noSweptKeys } from "../../src/storage/lmdb/ack-sweep.ts";
import { AckedKeyRanges } from "../../src/storage/lmdb/acked-key-ranges.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { CommitBatch, Store } from "../../src/storage/store.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { withTempDataDir } from "../support/temp-data-dir.ts";
import { itemRecord, shardBatch } from "./record-fixtures.ts";
import { loadAll } from "./store-suite.ts";

const shards = 4;

function ackedRecord(endedAtMs: number, keys: number[]): AckedLogRecord {
  return { endedAtMs, namespaces: ["billing"], nsIndexes: keys.map(() => 0), shards: keys.map((key) => key % shards), keys };
}

/** Items 0..count-1, key k on shard k % shards. */
function enqueueBatch(count: number): CommitBatch {
  const byShard = Array.from({ length: shards }, (_, shard) => shardBatch(shard, []));
  for (let key = 0; key < count; key++) {
    byShard[key % shards]?.keys.push(key);
    byShard[key % shards]?.records.push(itemRecord());
  }
  return { shards: byShard, outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null };
}

/** What the engine commits for acks: each item's delete and one acked-log record. */
function ackBatch(keys: number[], endedAtMs: number, purgeBeforeMs: number | null = null): CommitBatch {
  const byShard = new Map<number, CommitBatch["shards"][number]>();
  for (const key of keys) {
    const shard = key % shards;
    if (!byShard.has(shard)) byShard.set(shard, shardBatch(shard, []));
    byShard.get(shard)?.keys.push(key);
    byShard.get(shard)?.records.push(null);
  }
  return { shards: [...byShard.values()], outcomes: [], meta: null, acked: ackedRecord(endedAtMs, keys), ackedPurgeBeforeMs: purgeBeforeMs };
}

function liveKeys(store: Store): number[] {
  return [...loadAll(store).values()].flatMap((items) => items.map(({ key }) => key)).sort((a, b) => a - b);
}

function storedKeys(store: Store, upTo: number): number[] {
  const keys: number[] = [];
  for (let key = 0; key < upTo; key++) if (store.readItem(key % shards, key) !== null) keys.push(key);
  return keys;
}

function withDataDir(run: (dataDir: string) => Promise<void>): Promise<void> {
  return withTempDataDir("orq-ack-sweep-", run);
}

describe("AckSweep", () => {
  test("against a sorted model: takeLowest keeps the highest keys, takeBelowFloors takes what lies below each shard's floor, takeAckedBefore takes by time, addAll restores", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = seededRandom(seed);
      const sweep = new AckSweep();
      let model: Array<{ key: number; shard: number; ackedAtMs: number }> = [];
      let nextKey = 0;
      for (let step = 0; step < 300; step++) {
        const choice = random();
        if (choice < 0.6) {
          // Keys arrive out of order, as acks of a priority queue do.
          const key = nextKey + Math.floor(random() * 50);
          nextKey += 1 + Math.floor(random() * 3);
          if (model.some((entry) => entry.key === key)) continue;
          const entry = { key, shard: Math.floor(random() * 4096), ackedAtMs: Math.floor(random() * 1000) };
          sweep.add(entry.shard, entry.key, entry.ackedAtMs);
          model.push(entry);
        } else if (choice < 0.85) {
          const keep = Math.floor(random() * 40);
          const taken = noSweptKeys();
          sweep.takeLowest(keep, taken);
          model.sort((a, b) => a.key - b.key);
          const expected = model.slice(0, Math.max(0, model.length - keep));
          model = model.slice(expected.length);
          expect(taken.keys).toEqual(expected.map((entry) => entry.key));
          expect(taken.shards).toEqual(expected.map((entry) => entry.shard));
          expect(taken.ackedAtMs).toEqual(expected.map((entry) => entry.ackedAtMs));
          if (random() < 0.3) {
            // A failed commit puts its keys back.
            sweep.addAll(taken);
            model.push(...expected);
          }
        } else if (choice < 0.93) {
          // Floors: each shard's lowest live key; every waiting key below its shard's floor goes.
          const floors = new Map<number, number>();
          const floorOf = (shard: number): number => {
            if (!floors.has(shard)) floors.set(shard, random() < 0.2 ? Infinity : nextKey - Math.floor(random() * 200));
            return floors.get(shard) as number;
          };
          const taken = noSweptKeys();
          sweep.takeBelowFloors(floorOf, taken);
          const below = (entry: { key: number; shard: number }) => entry.key < floorOf(entry.shard);
          const expected = model.filter(below).map((entry) => `${entry.shard}:${entry.key}:${entry.ackedAtMs}`).sort();
          model = model.filter((entry) => !below(entry));
          expect(taken.keys.map((key, i) => `${taken.shards[i]}:${key}:${taken.ackedAtMs[i]}`).sort()).toEqual(expected);
        } else {
          const beforeMs = Math.floor(random() * 1000);
          const taken = noSweptKeys();
          sweep.takeAckedBefore(beforeMs, taken);
          const expected = model.filter((entry) => entry.ackedAtMs < beforeMs).map((entry) => entry.key).sort((a, b) => a - b);
          model = model.filter((entry) => entry.ackedAtMs >= beforeMs);
          expect([...taken.keys].sort((a, b) => a - b)).toEqual(expected);
        }
        sweep.checkInvariants();
        expect(sweep.size).toBe(model.length);
      }
    }
  });
});

describe("AckedKeyRanges", () => {
  test("answers membership from the log's runs, with the earliest record's end where runs of two records meet", () => {
    const encode = (record: AckedLogRecord): Uint8Array => {
      const writer = new ByteWriter(64);
      appendAckedLog(writer, record);
      return writer.written(0, writer.length).slice();
    };
    const ranges = new AckedKeyRanges([encode(ackedRecord(500, [10, 11, 12, 40])), encode(ackedRecord(300, [13, 14, 90])), encode(ackedRecord(700, [41]))]);
    expect(ranges.rangeCount).toBe(3);
    for (const key of [9, 15, 39, 42, 89, 91, 0]) expect(ranges.ackedAtMs(key)).toBeNull();
    for (const key of [10, 11, 12, 13, 14]) expect(ranges.ackedAtMs(key)).toBe(300);
    expect(ranges.ackedAtMs(40)).toBe(500);
    expect(ranges.ackedAtMs(41)).toBe(500);
    expect(ranges.ackedAtMs(90)).toBe(300);
    expect(new AckedKeyRanges([]).ackedAtMs(1)).toBeNull();
  });
});

describe("LMDB store: acked records are swept", () => {
  test("an ack's record stays until later commits take the lowest acked keys; loads never show it", async () => {
    await withDataDir(async (dataDir) => {
      const store = await openLmdbStore({ dataDir, shards, durability: "relaxed", ackSweepLagKeys: 3 });
      await store.commit(enqueueBatch(12));
      await store.commit(ackBatch([9, 3, 7, 1, 5], 1000));
      // Nothing was waiting before this commit: every record is still there, but no load shows the acked ones.
      expect(storedKeys(store, 12)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(liveKeys(store)).toEqual([0, 2, 4, 6, 8, 10, 11]);
      await store.commit(ackBatch([0], 2000));
      // Five were waiting; the commit deleted the two lowest and left three.
      expect(storedKeys(store, 12)).toEqual([0, 2, 4, 5, 6, 7, 8, 9, 10, 11]);
      await store.commit(enqueueBatch(0));
      // An empty batch sweeps too: four waiting (0 joined after its commit), three left.
      expect(storedKeys(store, 12)).toEqual([2, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(liveKeys(store)).toEqual([2, 4, 6, 8, 10, 11]);
      await store.close();
      const again = await openLmdbStore({ dataDir, shards, durability: "relaxed", ackSweepLagKeys: 3 });
      // close() deleted the rest.
      expect(again.storedCounts().items).toBe(6);
      expect(liveKeys(again)).toEqual([2, 4, 6, 8, 10, 11]);
      await again.close();
    });
  });

  test("with the engine's floors, an acked record goes once nothing below it in its shard is live; the lag still bounds what waits", async () => {
    await withDataDir(async (dataDir) => {
      const store = await openLmdbStore({ dataDir, shards, durability: "strict", ackSweepLagKeys: 2 });
      await store.commit(enqueueBatch(16));
      // The engine's view: live keys per shard (key k on shard k % 4).
      const live = new Set<number>(Array.from({ length: 16 }, (_, key) => key));
      if (store.setLiveKeyFloor === undefined) throw new Error("the LMDB store takes the engine's floors");
      store.setLiveKeyFloor((shard) => Math.min(Infinity, ...[...live].filter((key) => key % shards === shard)));
      const ack = async (keys: number[], endedAtMs: number) => {
        for (const key of keys) live.delete(key);
        await store.commit(ackBatch(keys, endedAtMs));
      };
      // Shard 1 holds 1, 5, 9, 13. Acking 5 and 13 leaves 1 and 9 live below or between them: both wait.
      await ack([5, 13], 1000);
      await store.commit(enqueueBatch(0));
      expect(storedKeys(store, 16).filter((key) => key % shards === 1)).toEqual([1, 5, 9, 13]);
      // Once 1 is acked, nothing live lies below 5 (9 still lies below 13): 1 and 5 go, 13 waits.
      await ack([1], 2000);
      await store.commit(enqueueBatch(0));
      expect(storedKeys(store, 16).filter((key) => key % shards === 1)).toEqual([9, 13]);
      // A shard with nothing live left is swept whole.
      await ack([9], 3000);
      await store.commit(enqueueBatch(0));
      expect(storedKeys(store, 16).filter((key) => key % shards === 1)).toEqual([]);
      // Shard 2 (2, 6, 10, 14) keeps 2 live: what is acked above it waits, up to the lag of 2, then the lowest go
      // anyway (6); shard 3, acked whole, goes whole.
      await ack([6, 10, 14, 3, 7, 11, 15], 4000);
      await store.commit(enqueueBatch(0));
      expect(storedKeys(store, 16).filter((key) => key % shards === 2)).toEqual([2, 10, 14]);
      expect(liveKeys(store)).toEqual([0, 2, 4, 8, 12]);
      await store.close();
    });
  });

  test("a purge of the acked log first deletes the records of the keys it forgets", async () => {
    await withDataDir(async (dataDir) => {
      const store = await openLmdbStore({ dataDir, shards, durability: "strict", ackSweepLagKeys: 1000 });
      await store.commit(enqueueBatch(8));
      await store.commit(ackBatch([6, 2], 1000));
      await store.commit(ackBatch([4], 5000));
      expect(store.storedCounts().items).toBe(8);
      await store.commit(ackBatch([0], 9000, 2000));
      // The purge forgets the record ending at 1000: keys 6 and 2 go with it; 4 and 0 wait.
      expect(storedKeys(store, 8)).toEqual([0, 1, 3, 4, 5, 7]);
      expect(liveKeys(store)).toEqual([1, 3, 5, 7]);
      await store.close();
    });
  });

  test("after SIGKILL, a restart skips the acked records left on disk, and the first commit or close deletes them", async () => {
    await withDataDir(async (dataDir) => {
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "../support/ack-sweep-child.ts"), dataDir], { stdout: "pipe", stderr: "inherit" });
      const { value } = await child.stdout.getReader().read();
      expect(new TextDecoder().decode(value)).toBe("ready\n");
      child.kill("SIGKILL");
      await child.exited;
      expect(child.signalCode).toBe("SIGKILL");
      const store = await openLmdbStore({ dataDir, shards, durability: "strict", ackSweepLagKeys: 2 });
      // The acked records are still on disk: the child died before any sweep.
      expect(storedKeys(store, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(liveKeys(store)).toEqual([0, 3, 4]);
      // The load queued them: a commit deletes all but the lag's two highest.
      await store.commit(enqueueBatch(0));
      expect(storedKeys(store, 8)).toEqual([0, 3, 4, 6, 7]);
      await store.close();
      const again = await openLmdbStore({ dataDir, shards, durability: "strict" });
      expect(again.storedCounts().items).toBe(3);
      expect(liveKeys(again)).toEqual([0, 3, 4]);
      await again.close();
    });
  });
});
