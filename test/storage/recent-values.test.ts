// Goal: the ring of recent values never answers with another item's parts or
// a dropped item's, only with the delivery parts of the last value put for
// that shard and key, and does answer for the items put last (as many as fit
// in the ring, unless a later key took the slot). Then the LMDB store with a
// ring small enough to wrap many times answers a delivery's read exactly as
// its stored value would, after every commit of puts, deletes and acks,
// seeded; and a view of a stored value is the reader's to slice.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecentValues } from "../../src/storage/lmdb/recent-values.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { DeliveryParts, type ItemValueBytes, locateDeliveryParts } from "../../src/storage/item-record.ts";
import { encodeItemRecord, itemValueBytes } from "../../src/storage/record-codec.ts";
import type { CommitBatch, ShardBatch } from "../../src/storage/store.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { itemRecord } from "./record-fixtures.ts";

function bytesOf(length: number, fill: number): Uint8Array {
  return new Uint8Array(length).map((_, index) => (fill + index) & 0xff);
}

/** An item value with a payload of `payloadBytes`, and (when `step` is odd) metadata and a trace. */
function valueOf(payloadBytes: number, step: number): Uint8Array {
  const extra = step % 2 === 1 ? { metadata: bytesOf(step % 40, step + 7), trace: `00-${String(step).padStart(32, "0")}-0000000000000001-01` } : {};
  return encodeItemRecord(itemRecord({ payload: bytesOf(payloadBytes, step), enqueuedAtMs: 1_700_000_000_000 + step, ...extra }));
}

function put(ring: RecentValues, shard: number, key: number, value: Uint8Array): void {
  const parts = new DeliveryParts();
  locateDeliveryParts(value, parts);
  ring.put(shard, key, value, parts);
}

function read(ring: RecentValues, shard: number, key: number): ItemValueBytes | null {
  const into: ItemValueBytes = { payload: new Uint8Array(0), metadata: new Uint8Array(0), enqueuedAtMs: 0, trace: null };
  return ring.readDelivery(shard, key, into) ? into : null;
}

describe("RecentValues", () => {
  test("answers with the last value's delivery parts, or nothing; never another key's or a dropped key's (seeded, checked after every step)", () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const ring = new RecentValues(8192, 16);
      const model = new Map<string, ItemValueBytes>();
      let answered = 0;
      for (let step = 0; step < 3000; step++) {
        const shard = Math.floor(random() * 3);
        const key = Math.floor(random() * 40);
        const roll = random();
        if (roll < 0.6) {
          // Payloads from 0 to 600 bytes: some records larger than a sixteenth of the ring (never kept).
          const value = valueOf(Math.floor(random() * 600), step);
          put(ring, shard, key, value);
          model.set(`${shard}:${key}`, itemValueBytes(value));
        } else if (roll < 0.8) {
          ring.drop(key);
          for (let s = 0; s < 3; s++) model.delete(`${s}:${key}`);
        }
        for (let s = 0; s < 3; s++) {
          for (let k = 0; k < 40; k++) {
            const got = read(ring, s, k);
            if (got === null) continue;
            answered++;
            expect(got).toEqual(model.get(`${s}:${k}`) as ItemValueBytes);
          }
        }
      }
      expect(answered).toBeGreaterThan(1000);
    }
  });

  test("the items put last are found while they fit in the ring, consecutive keys in consecutive slots", () => {
    const ring = new RecentValues(64 * 1024, 1024);
    // Records of 20 + 100 bytes: 546 fit in 64 KiB.
    for (let key = 0; key < 2000; key++) put(ring, key % 4, key, valueOf(100, key * 2));
    const found = Array.from({ length: 2000 }, (_, key) => ring.holds(key % 4, key));
    expect(found.slice(2000 - 540).every(Boolean)).toBe(true);
    expect(found.slice(0, 2000 - 560).some(Boolean)).toBe(false);
    expect(read(ring, 0, 1997)).toBeNull();
    expect(read(ring, 1, 1999)).toBeNull();
    expect(read(ring, 3, 1999)).toEqual(itemValueBytes(valueOf(100, 1999 * 2)));
    expect(ring.hits).toBe(1);
    expect(ring.misses).toBe(2);
    expect(ring.residentBytes).toBe(64 * 1024);
  });

  test("an item whose parts are larger than a sixteenth of the ring is not kept, and drops what the key held", () => {
    const ring = new RecentValues(16 * 1024, 64);
    put(ring, 0, 7, valueOf(100, 2));
    expect(ring.holds(0, 7)).toBe(true);
    put(ring, 0, 7, valueOf(1025, 4));
    expect(ring.holds(0, 7)).toBe(false);
  });

  test("sizes: the ring at least 1 KiB, at least one slot", () => {
    expect(() => new RecentValues(1000, 16)).toThrow(RangeError);
    expect(() => new RecentValues(4096, 0)).toThrow(RangeError);
  });
});

describe("LMDB store with a ring of recent values", () => {
  test("a delivery's read answers as the stored value would, after every commit of puts, deletes and acks (seeded, a 4 KiB ring that wraps)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-recent-values-"));
    const store = await openLmdbStore({ dataDir, shards: 2, durability: "relaxed", recentValuesBytes: 4096 });
    try {
      const random = seededRandom(44);
      const live = new Map<number, Uint8Array>();
      let nextKey = 1;
      for (let step = 0; step < 150; step++) {
        const shards: ShardBatch[] = [
          { shard: 0, keys: [], records: [] },
          { shard: 1, keys: [], records: [] },
        ];
        const acked: number[] = [];
        for (let write = 0; write < 1 + Math.floor(random() * 6); write++) {
          const roll = random();
          const existing = [...live.keys()];
          const key = roll < 0.5 || existing.length === 0 ? nextKey++ : (existing[Math.floor(random() * existing.length)] as number);
          const batch = shards[key % 2] as ShardBatch;
          if (batch.keys.includes(key)) continue;
          batch.keys.push(key);
          if (roll < 0.75 || !live.has(key)) {
            const record = itemRecord({ priority: step, payload: bytesOf(Math.floor(random() * 300), step), attempt: write });
            const value = encodeItemRecord(record);
            // Whole records and encoded values, as the engine writes both.
            batch.records.push(random() < 0.5 ? record : value);
            live.set(key, value);
          } else {
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
        expect((await store.commit(commit)).failedShards.size).toBe(0);
        for (let key = 1; key < nextKey; key++) {
          const into: ItemValueBytes = { payload: new Uint8Array(0), metadata: new Uint8Array(0), enqueuedAtMs: 0, trace: null };
          const answered = store.readDeliveryBytes?.(key % 2, key, into) === true;
          const value = live.get(key);
          if (value === undefined) expect(answered).toBe(false);
          else if (answered) expect(into).toEqual(itemValueBytes(value));
        }
      }
      const figures = store.recentValuesFigures?.();
      expect(figures?.hits).toBeGreaterThan(100);
      expect(figures?.misses).toBeGreaterThan(100);
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("LMDB store views", () => {
  test("what a reader slices out of a view is its own (lmdb-js reads into a Node Buffer, whose slice is a view)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orq-recent-views-"));
    const store = await openLmdbStore({ dataDir, shards: 1, durability: "relaxed", recentValuesBytes: 0 });
    try {
      const records = ["one", "two"].map((text) => encodeItemRecord(itemRecord({ payload: new TextEncoder().encode(text) })));
      await store.commit({ shards: [{ shard: 0, keys: [1, 2], records }], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
      const view = store.viewItemBytes?.(0, 1) as Uint8Array;
      const sliced = view.slice(0, view.length);
      store.viewItemBytes?.(0, 2);
      expect(Array.from(sliced)).toEqual(Array.from(records[0] as Uint8Array));
      expect(store.recentValuesFigures?.()).toBeNull();
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
