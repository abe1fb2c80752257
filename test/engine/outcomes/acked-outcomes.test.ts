// AckedOutcomes: acked keys are found by (namespace, key) while retained, in
// open and closed blocks, as runs, bitmaps and plain keys; blocks close at
// blockItemsMax and after blockSpanMs; retention drops whole blocks, never
// one whose newest entry is younger than the cutoff; the memory per item stays
// a fraction of a byte when keys run nearly in order.

import { describe, expect, test } from "bun:test";
import { AckedOutcomes } from "../../../src/engine/outcomes/acked-outcomes.ts";
import { ackedOutcomeBounds } from "../../../src/limits.ts";
import { seededRandom } from "../../support/seeded-random.ts";

describe("AckedOutcomes", () => {
  test("finds what was added, in its namespace only", () => {
    const acked = new AckedOutcomes({ blockItemsMax: 8, blockSpanMs: 1000 });
    for (let key = 100; key < 120; key++) acked.add("a", key, 5);
    acked.checkInvariants();
    expect(acked.size).toBe(20);
    for (let key = 100; key < 120; key++) {
      expect(acked.has("a", key)).toBe(true);
      expect(acked.has(null, key)).toBe(true);
      expect(acked.has("b", key)).toBe(false);
    }
    expect(acked.has("a", 99)).toBe(false);
    expect(acked.has("a", 120)).toBe(false);
  });

  test("a block closes at blockItemsMax - 1, blockItemsMax and blockItemsMax + 1 items without losing any", () => {
    const max = 16;
    for (const count of [max - 1, max, max + 1]) {
      const acked = new AckedOutcomes({ blockItemsMax: max, blockSpanMs: 1_000_000 });
      for (let i = 0; i < count; i++) acked.add("n", 1000 + i * 2, 1);
      acked.checkInvariants();
      for (let i = 0; i < count; i++) expect(acked.has("n", 1000 + i * 2)).toBe(true);
      for (let i = 0; i < count; i++) expect(acked.has("n", 1001 + i * 2)).toBe(false);
    }
  });

  for (const [name, jump, spread] of [
    ["runs", 0.02, 3],
    ["bitmaps", 0.5, 4],
    ["plain keys", 0.9, 100_000],
  ] as const) {
    test(`random keys and namespaces agree with a Set model (${name})`, () => {
      const random = { next: seededRandom(42) };
      const acked = new AckedOutcomes({ blockItemsMax: 64, blockSpanMs: 1_000_000 });
      // Keys are unique across shards and namespaces (the key allocator is global), as in the engine.
      const used = new Set<number>();
      const model = new Set<string>();
      let key = 1000;
      let top = 0;
      for (let i = 0; i < 5000; i++) {
        key = random.next() < jump ? Math.max(0, key + Math.floor((random.next() - 0.5) * 2 * spread)) : key + 1;
        const ns = random.next() < 0.9 ? "a" : "b";
        if (used.has(key)) continue;
        used.add(key);
        model.add(`${ns}/${key}`);
        acked.add(ns, key, i);
        top = Math.max(top, key);
      }
      acked.checkInvariants();
      expect(acked.size).toBe(used.size);
      for (let probe = 0; probe < 20000; probe++) {
        const k = Math.floor(random.next() * (top + 50));
        const ns = random.next() < 0.5 ? "a" : "b";
        expect(acked.has(ns, k)).toBe(model.has(`${ns}/${k}`));
      }
      for (const id of model) {
        const [ns, k] = id.split("/");
        expect(acked.has(ns!, Number(k))).toBe(true);
      }
    });
  }

  test("retention drops whole blocks once their newest entry is at or before the cutoff", () => {
    const acked = new AckedOutcomes({ blockItemsMax: 1000, blockSpanMs: 10 });
    acked.add("n", 1, 0);
    acked.add("n", 2, 5); // same block (opened at 0, span 10)
    acked.add("n", 3, 10); // a new block: the first has been open 10 ms
    expect(acked.oldestNewestEndedAtMs()).toBe(5);
    expect(acked.expire(4)).toBe(0);
    expect(acked.has("n", 1)).toBe(true);
    expect(acked.expire(5)).toBe(2);
    expect(acked.has("n", 1)).toBe(false);
    expect(acked.has("n", 2)).toBe(false);
    expect(acked.has("n", 3)).toBe(true);
    expect(acked.oldestNewestEndedAtMs()).toBe(10);
    expect(acked.expire(10)).toBe(1);
    expect(acked.size).toBe(0);
    expect(acked.oldestNewestEndedAtMs()).toBeNull();
    acked.checkInvariants();
  });

  test("a drain's acks nearly in key order cost a fraction of a byte an item", () => {
    const acked = new AckedOutcomes();
    const count = 400_000;
    const random = { next: seededRandom(7) };
    // Consumers ack in batches that overlap: each key is acked within ~500 places of its order.
    const pending: number[] = [];
    let next = 0;
    let added = 0;
    while (added < count) {
      while (pending.length < 500) pending.push(next++);
      const at = Math.floor(random.next() * pending.length);
      const key = pending[at]!;
      pending[at] = pending[pending.length - 1]!;
      pending.pop();
      acked.add("n", key, Math.floor(added / 20));
      added++;
    }
    acked.checkInvariants();
    const open = ackedOutcomeBounds.blockItemsMax * 8;
    expect((acked.bytes - open) / count).toBeLessThan(0.25);
    // In strict key order, runs: far less again.
    const ordered = new AckedOutcomes();
    for (let key = 0; key < count; key++) ordered.add("n", key, Math.floor(key / 20));
    expect((ordered.bytes - open) / count).toBeLessThan(0.02);
    expect(ordered.has("n", 12345)).toBe(true);
    expect(acked.has("n", 12345)).toBe(true);
    expect(acked.has("n", next + 1)).toBe(false);
  });
});
