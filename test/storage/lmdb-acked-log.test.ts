// Goal: the LMDB store's acked log costs bytes per commit, not per item.
// Commits within blockSpanMs of a record's first are merged into that one
// record (rewritten under the same key) until it reaches logRecordBytesMax;
// then, or after the span, or after a reopen, a new record starts. Every
// acked key comes back on reload, and runs of consecutive keys cost a few
// bytes whatever their length.

import { describe, expect, test } from "bun:test";
import { ackedOutcomeBounds } from "../../src/limits.ts";
import { AckedLogBuilder, type AckedLogRecord, appendAckedLog, decodeAckedLog } from "../../src/storage/acked-log.ts";
import { ByteWriter } from "../../src/storage/byte-cursor.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import type { CommitBatch, Store } from "../../src/storage/store.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { withTempDataDir } from "../support/temp-data-dir.ts";

function acked(endedAtMs: number, keys: number[], ns = "n"): CommitBatch {
  const record: AckedLogRecord = { endedAtMs, namespaces: [ns], nsIndexes: keys.map(() => 0), shards: keys.map(() => 0), keys };
  return { shards: [], outcomes: [], meta: null, acked: record, ackedPurgeBeforeMs: null };
}

function entries(store: Store): string[] {
  return [...store.loadAckedLog()].flatMap((record) => record.keys.map((key, i) => `${record.namespaces[record.nsIndexes[i]!]}/${key}@${record.endedAtMs}`));
}

function withStore(run: (dataDir: string) => Promise<void>): Promise<void> {
  return withTempDataDir("orq-lmdb-acked-", run);
}

describe("LMDB acked log", () => {
  test("commits within the span share one record; the span and a reopen start new ones", async () => {
    await withStore(async (dataDir) => {
      let store = await openLmdbStore({ dataDir, shards: 2, durability: "relaxed" });
      await store.commit(acked(1000, [3, 1, 2]));
      await store.commit(acked(1500, [4, 5], "m"));
      await store.commit(acked(2000, [10]));
      expect([...store.loadAckedLog()].map((r) => r.endedAtMs)).toEqual([2000]);
      expect(entries(store).sort()).toEqual(["m/4@2000", "m/5@2000", "n/10@2000", "n/1@2000", "n/2@2000", "n/3@2000"]);
      await store.commit(acked(1000 + ackedOutcomeBounds.blockSpanMs, [11]));
      expect([...store.loadAckedLog()].map((r) => r.endedAtMs)).toEqual([2000, 1000 + ackedOutcomeBounds.blockSpanMs]);
      await store.close();
      store = await openLmdbStore({ dataDir, shards: 2, durability: "relaxed" });
      await store.commit(acked(1000 + ackedOutcomeBounds.blockSpanMs + 1, [12]));
      expect([...store.loadAckedLog()].map((r) => r.keys)).toEqual([[1, 2, 3, 10, 4, 5], [11], [12]]); // per namespace, in key order
      // A purge removes the open record when it is old enough; the next ack starts a new one after it.
      await store.commit({ shards: [], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: 1_000_000 });
      expect(entries(store)).toEqual([]);
      await store.commit(acked(2_000_000, [20]));
      await store.commit(acked(2_000_001, [21]));
      expect([...store.loadAckedLog()].map((r) => r.keys)).toEqual([[20, 21]]);
      await store.close();
    });
  });

  test("a record closes at logRecordBytesMax; every key comes back", async () => {
    await withStore(async (dataDir) => {
      const store = await openLmdbStore({ dataDir, shards: 1, durability: "relaxed" });
      const expected: number[] = [];
      // Scattered keys: every commit adds runs of one, a few bytes each.
      for (let commit = 0; commit < 200; commit++) {
        const keys = [commit * 1000, commit * 1000 + 7, commit * 1000 + 500];
        expected.push(...keys);
        await store.commit(acked(5000, keys));
      }
      const records = [...store.loadAckedLog()];
      expect(records.length).toBeGreaterThan(1);
      expect(records.flatMap((r) => r.keys)).toEqual(expected);
      await store.close();
    });
  });

  test("a run of consecutive keys costs a few bytes however long, and version 1 records still read", () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => 1_000_000 + i);
    const writer = new ByteWriter();
    appendAckedLog(writer, { endedAtMs: 7, namespaces: ["n"], nsIndexes: keys.map(() => 0), shards: keys.map(() => 0), keys });
    const bytes = writer.finish();
    expect(bytes.length).toBeLessThan(40);
    expect(decodeAckedLog(bytes).keys).toEqual(keys);
    // Version 1: kind 4, version 1, f64 endedAtMs, u32 1 namespace "n", u32 2 entries, (ns 0, shard 3, delta 5), (ns 0, shard 1, delta 2).
    const v1 = new ByteWriter();
    v1.u8(4);
    v1.u8(1);
    v1.f64(9);
    v1.u32(1);
    v1.string("n");
    v1.u32(2);
    for (const byte of [0, 3, 5, 0, 1, 2]) v1.u8(byte);
    const decoded = decodeAckedLog(v1.finish());
    expect(decoded).toEqual({ endedAtMs: 9, namespaces: ["n"], nsIndexes: [0, 0], shards: [], keys: [5, 7] });
  });

  test("the builder merges keys from commits in any order into sorted runs, and rollback undoes one commit", () => {
    const random = seededRandom(11);
    const builder = new AckedLogBuilder();
    const model = new Map<string, Set<number>>([["a", new Set()], ["b", new Set()]]);
    for (let commit = 0; commit < 300; commit++) {
      const keys: number[] = [];
      const nsIndexes: number[] = [];
      const base = Math.floor(random() * 3000);
      for (let i = 0; i < 1 + Math.floor(random() * 20); i++) {
        keys.push(random() < 0.8 ? base + i : Math.floor(random() * 3000));
        nsIndexes.push(random() < 0.8 ? 0 : 1);
      }
      const record: AckedLogRecord = { endedAtMs: commit, namespaces: ["a", "b"], nsIndexes, shards: [], keys };
      builder.mark();
      builder.add(record);
      if (random() < 0.2) {
        builder.rollback(); // a failed commit: its keys are not in the record
        continue;
      }
      keys.forEach((key, i) => model.get(nsIndexes[i] === 0 ? "a" : "b")!.add(key));
    }
    const writer = new ByteWriter();
    builder.encode(writer);
    expect(builder.encodedBytes).toBe(writer.length);
    const decoded = decodeAckedLog(writer.finish());
    const got = new Map<string, number[]>([["a", []], ["b", []]]);
    decoded.keys.forEach((key, i) => got.get(decoded.namespaces[decoded.nsIndexes[i]!]!)!.push(key));
    for (const ns of ["a", "b"]) expect(got.get(ns)).toEqual([...model.get(ns)!].sort((x, y) => x - y));
  });

  test("keys acked out of order across commits still cost one run", () => {
    const builder = new AckedLogBuilder();
    // Two consumers: takes of 100 keys acked in alternating, not key, order.
    for (let take = 0; take < 100; take += 2) {
      for (const first of [take + 1, take]) {
        const keys = Array.from({ length: 100 }, (_, i) => first * 100 + i);
        builder.add({ endedAtMs: take, namespaces: ["n"], nsIndexes: keys.map(() => 0), shards: [], keys });
      }
    }
    const writer = new ByteWriter();
    builder.encode(writer);
    expect(writer.length).toBeLessThan(30);
    expect(decodeAckedLog(writer.finish()).keys.length).toBe(10_000);
  });
});
