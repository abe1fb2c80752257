// Goal: the ring of recent values never answers with bytes other than the
// last ones put for that shard and key, never answers for a dropped key, and
// does answer for the values put last (as many as fit in the ring, unless a
// later key took the slot). Then the LMDB store with a ring small enough to
// wrap many times reads exactly what LMDB holds after every commit of puts,
// deletes and acks, seeded.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecentValues } from "../../src/storage/lmdb/recent-values.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { encodeItemRecord } from "../../src/storage/record-codec.ts";
import type { CommitBatch, ShardBatch } from "../../src/storage/store.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { itemRecord } from "./record-fixtures.ts";

function bytesOf(length: number, fill: number): Uint8Array {
  return new Uint8Array(length).map((_, index) => (fill + index) & 0xff);
}

describe("RecentValues", () => {
  test("answers with the last value put, or nothing; never another key's or a dropped key's (seeded, checked after every step)", () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const ring = new RecentValues(4096, 16);
      const model = new Map<string, Uint8Array>();
      let answered = 0;
      for (let step = 0; step < 4000; step++) {
        const shard = Math.floor(random() * 3);
        const key = Math.floor(random() * 40);
        const roll = random();
        if (roll < 0.6) {
          // Values from 0 to 400 bytes, some larger than a sixteenth of the ring (never kept).
          const value = bytesOf(Math.floor(random() * 400), step);
          const source = new Uint8Array(value.length + 10);
          source.set(value, 5);
          ring.put(shard, key, source, 5, 5 + value.length);
          model.set(`${shard}:${key}`, value);
        } else if (roll < 0.8) {
          ring.drop(key);
          for (let s = 0; s < 3; s++) model.delete(`${s}:${key}`);
        }
        for (let s = 0; s < 3; s++) {
          for (let k = 0; k < 40; k++) {
            const got = ring.copy(s, k);
            if (got === null) continue;
            answered++;
            expect(got).toEqual(model.get(`${s}:${k}`) as Uint8Array);
            expect(ring.viewOf(s, k)).toEqual(got);
          }
        }
      }
      expect(answered).toBeGreaterThan(1000);
    }
  });

  test("the values put last are found while they fit in the ring, consecutive keys in consecutive slots", () => {
    const ring = new RecentValues(64 * 1024, 1024);
    // 100 bytes each: 655 fit in 64 KiB.
    for (let key = 0; key < 2000; key++) ring.put(key % 4, key, bytesOf(100, key), 0, 100);
    const found = Array.from({ length: 2000 }, (_, key) => ring.holds(key % 4, key));
    expect(found.slice(2000 - 650).every(Boolean)).toBe(true);
    expect(found.slice(0, 2000 - 660).some(Boolean)).toBe(false);
    expect(ring.copy(0, 1997)).toBeNull();
    expect(ring.copy(1, 1999)).toBeNull();
    expect(ring.copy(3, 1999)).toEqual(bytesOf(100, 1999));
    expect(ring.hits).toBe(1);
    expect(ring.misses).toBe(2);
    expect(ring.residentBytes).toBe(64 * 1024);
  });

  test("a run of values copied at once is indexed value by value; a run over a quarter of the ring is refused", () => {
    const ring = new RecentValues(4096, 64);
    const source = new Uint8Array(300).map((_, index) => index & 0xff);
    const run = ring.append(source, 10, 250);
    expect(run).toBeGreaterThanOrEqual(0);
    ring.index(0, 1, run, 40);
    ring.index(1, 2, run + 40, 200);
    expect(ring.copy(0, 1)).toEqual(source.slice(10, 50));
    expect(ring.copy(1, 2)).toEqual(source.slice(50, 250));
    expect(ring.append(new Uint8Array(1100), 0, 1025)).toBe(-1);
  });

  test("a value larger than a sixteenth of the ring is not kept, and drops what the key held", () => {
    const ring = new RecentValues(16 * 1024, 64);
    ring.put(0, 7, bytesOf(100, 1), 0, 100);
    expect(ring.holds(0, 7)).toBe(true);
    ring.put(0, 7, bytesOf(1025, 2), 0, 1025);
    expect(ring.holds(0, 7)).toBe(false);
  });

  test("sizes: the ring at least 1 KiB, the slots a power of two", () => {
    expect(() => new RecentValues(1000, 16)).toThrow(RangeError);
    expect(() => new RecentValues(4096, 12)).toThrow(RangeError);
  });
});

describe("LMDB store with a ring of recent values", () => {
  test("reads what LMDB holds after every commit of puts, deletes and acks (seeded, a 2 KiB ring that wraps)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-recent-values-"));
    const plainDir = mkdtempSync(join(tmpdir(), "orq-recent-values-plain-"));
    const store = await openLmdbStore({ dataDir, shards: 2, durability: "relaxed", recentValuesBytes: 2048 });
    const plain = await openLmdbStore({ dataDir: plainDir, shards: 2, durability: "relaxed", recentValuesBytes: 0 });
    try {
      const random = seededRandom(44);
      const live = new Set<number>();
      let nextKey = 1;
      for (let step = 0; step < 150; step++) {
        const shards: ShardBatch[] = [
          { shard: 0, keys: [], records: [] },
          { shard: 1, keys: [], records: [] },
        ];
        const acked: number[] = [];
        for (let write = 0; write < 1 + Math.floor(random() * 6); write++) {
          const roll = random();
          const existing = [...live];
          const key = roll < 0.5 || existing.length === 0 ? nextKey++ : (existing[Math.floor(random() * existing.length)] as number);
          const batch = shards[key % 2] as ShardBatch;
          if (batch.keys.includes(key)) continue;
          if (roll < 0.75 || !live.has(key)) {
            const record = itemRecord({ priority: step, payload: bytesOf(Math.floor(random() * 300), step), attempt: write });
            batch.keys.push(key);
            // Whole records and encoded values, as the engine writes both.
            batch.records.push(random() < 0.5 ? record : encodeItemRecord(record));
            live.add(key);
          } else {
            batch.keys.push(key);
            batch.records.push(null);
            if (random() < 0.5) acked.push(key);
            live.delete(key);
          }
        }
        const commit: CommitBatch = {
          shards,
          outcomes: [],
          meta: null,
          acked: acked.length === 0 ? null : { endedAtMs: 1_000 + step, namespaces: ["billing"], nsIndexes: acked.map(() => 0), shards: acked.map((key) => key % 2), keys: acked },
          ackedPurgeBeforeMs: null,
        };
        const [result, plainResult] = await Promise.all([store.commit(commit), plain.commit(commit)]);
        expect(result.failedShards.size + plainResult.failedShards.size).toBe(0);
        // Acked keys stay in LMDB until the ack sweep deletes them: both stores answer alike meanwhile.
        for (let key = 1; key < nextKey; key++) {
          const expected = plain.readItemBytes(key % 2, key);
          if (live.has(key)) expect(expected).not.toBeNull();
          expect(store.readItemBytes(key % 2, key)).toEqual(expected);
          expect(store.readItem(key % 2, key)).toEqual(plain.readItem(key % 2, key));
        }
      }
      const figures = store.recentValuesFigures?.();
      expect(figures?.hits).toBeGreaterThan(100);
      expect(figures?.misses).toBeGreaterThan(100);
      expect(plain.recentValuesFigures?.()).toBeNull();
    } finally {
      await store.close();
      await plain.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(plainDir, { recursive: true, force: true });
    }
  });
});

describe("LMDB store views", () => {
  test("what a reader slices out of a view is its own, with or without the ring (lmdb-js reads into a Node Buffer, whose slice is a view)", async () => {
    for (const recentValuesBytes of [0, 4096]) {
      const dataDir = mkdtempSync(join(tmpdir(), "orq-recent-views-"));
      const store = await openLmdbStore({ dataDir, shards: 1, durability: "relaxed", recentValuesBytes });
      try {
        const records = ["one", "two"].map((text) => encodeItemRecord(itemRecord({ payload: new TextEncoder().encode(text) })));
        await store.commit({ shards: [{ shard: 0, keys: [1, 2], records }], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
        const first = store.viewItemBytes?.(0, 1)?.slice();
        const view = store.viewItemBytes?.(0, 1) as Uint8Array;
        const sliced = view.slice(0, view.length);
        store.viewItemBytes?.(0, 2);
        expect(sliced).toEqual(first as Uint8Array);
        expect(sliced).toEqual(records[0] as Uint8Array);
      } finally {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  });
});
