// AckedOutcomes: acked items are found by (namespace, shard, key) while
// retained, in open and closed blocks, as runs and as plain keys; blocks close
// at blockItemsMax and after blockSpanMs; retention drops whole blocks, never
// one whose newest entry is younger than the cutoff; the memory per item stays
// a few bytes when keys run in order.

import { describe, expect, test } from "bun:test";
import { AckedOutcomes } from "../../src/engine/acked-outcomes.ts";
import { ackedOutcomeBounds } from "../../src/limits.ts";
import { seededRandom } from "../support/seeded-random.ts";

const shards = 16;

describe("AckedOutcomes", () => {
  test("finds what was added, in its namespace and shard only", () => {
    const acked = new AckedOutcomes(shards, { blockItemsMax: 8, blockSpanMs: 1000 });
    for (let key = 100; key < 120; key++) acked.add("a", key % shards, key, 5);
    acked.checkInvariants();
    expect(acked.size).toBe(20);
    for (let key = 100; key < 120; key++) {
      expect(acked.has("a", key % shards, key)).toBe(true);
      expect(acked.has(null, key % shards, key)).toBe(true);
      expect(acked.has("b", key % shards, key)).toBe(false);
      expect(acked.has("a", (key + 1) % shards, key)).toBe(false);
    }
    expect(acked.has("a", 99 % shards, 99)).toBe(false);
    expect(acked.has("a", 120 % shards, 120)).toBe(false);
  });

  test("a block closes at blockItemsMax - 1, blockItemsMax and blockItemsMax + 1 items without losing any", () => {
    const max = 16;
    for (const count of [max - 1, max, max + 1]) {
      const acked = new AckedOutcomes(shards, { blockItemsMax: max, blockSpanMs: 1_000_000 });
      for (let i = 0; i < count; i++) acked.add("n", i % 3, 1000 + i * 2, 1);
      acked.checkInvariants();
      for (let i = 0; i < count; i++) expect(acked.has("n", i % 3, 1000 + i * 2)).toBe(true);
      for (let i = 0; i < count; i++) expect(acked.has("n", i % 3, 1001 + i * 2)).toBe(false);
    }
  });

  test("random keys, shards and namespaces agree with a Set model (runs and plain-key blocks)", () => {
    const next = seededRandom(42);
    const random = { next };
    const acked = new AckedOutcomes(shards, { blockItemsMax: 64, blockSpanMs: 1_000_000 });
    // Keys are unique across shards and namespaces (the key allocator is global), as in the engine.
    const used = new Set<number>();
    const model = new Set<string>();
    let key = 0;
    for (let i = 0; i < 5000; i++) {
      // Mostly in order (runs), sometimes jumping back or ahead (plain keys).
      key = random.next() < 0.8 ? key + 1 : Math.max(0, key + Math.floor(random.next() * 200) - 100);
      const shard = random.next() < 0.7 ? key % shards : Math.floor(random.next() * shards);
      const ns = random.next() < 0.9 ? "a" : "b";
      const id = `${ns}/${shard}/${key}`;
      if (used.has(key)) continue;
      used.add(key);
      model.add(id);
      acked.add(ns, shard, key, i);
    }
    acked.checkInvariants();
    for (let probe = 0; probe < 20000; probe++) {
      const k = Math.floor(random.next() * (key + 50));
      const shard = Math.floor(random.next() * shards);
      const ns = random.next() < 0.5 ? "a" : "b";
      expect(acked.has(ns, shard, k)).toBe(model.has(`${ns}/${shard}/${k}`));
    }
  });

  test("retention drops whole blocks once their newest entry is at or before the cutoff", () => {
    const acked = new AckedOutcomes(shards, { blockItemsMax: 1000, blockSpanMs: 10 });
    acked.add("n", 0, 1, 0);
    acked.add("n", 0, 2, 5); // same block (opened at 0, span 10)
    acked.add("n", 0, 3, 10); // a new block: the first has been open 10 ms
    expect(acked.oldestNewestEndedAtMs()).toBe(5);
    expect(acked.expire(4)).toBe(0);
    expect(acked.has("n", 0, 1)).toBe(true);
    expect(acked.expire(5)).toBe(2);
    expect(acked.has("n", 0, 1)).toBe(false);
    expect(acked.has("n", 0, 2)).toBe(false);
    expect(acked.has("n", 0, 3)).toBe(true);
    expect(acked.oldestNewestEndedAtMs()).toBe(10);
    expect(acked.expire(10)).toBe(1);
    expect(acked.size).toBe(0);
    expect(acked.oldestNewestEndedAtMs()).toBeNull();
    acked.checkInvariants();
  });

  test("a drain's acks in key order cost a few bytes an item", () => {
    const acked = new AckedOutcomes(shards);
    const count = 200_000;
    // Batch-1 enqueues rotate shards: key k sits on shard k mod 16.
    for (let key = 0; key < count; key++) acked.add("n", key % shards, key, Math.floor(key / 20));
    acked.checkInvariants();
    const open = ackedOutcomeBounds.blockItemsMax * 10;
    expect((acked.bytes - open) / count).toBeLessThan(1);
    expect(acked.has("n", 12345 % shards, 12345)).toBe(true);
    expect(acked.has("n", 12346 % shards, 12345)).toBe(false);
  });
});
