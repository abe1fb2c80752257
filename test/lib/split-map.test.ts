// Goal: a SplitMap answers as one Map would (get, set over an existing key,
// delete, size) in a seeded model of many keys, including keys that differ
// only before their last 16 characters, and when 100,000 keys grow its
// open-addressing parts, are half deleted and set again (deleted slots
// reused and dropped).

import { expect, test } from "bun:test";
import { SplitMap } from "../../src/lib/split-map.ts";

test("seeded model: the split map answers every step as one Map", () => {
  let state = 7;
  const random = (below: number): number => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state % below;
  };
  const split = new SplitMap<number>();
  const model = new Map<string, number>();
  // Short keys, long keys sharing their last 16 characters, the empty key.
  const keyOf = (n: number): string => (n % 3 === 0 ? `k${n}` : n % 3 === 1 ? `${n}/same-tail-sixteen!` : n === 2 ? "" : `order-${n}-x`);
  for (let step = 0; step < 20_000; step++) {
    const key = keyOf(random(3_000));
    const roll = random(10);
    if (roll < 5) {
      split.set(key, step);
      model.set(key, step);
    } else if (roll < 8) {
      expect(split.delete(key)).toBe(model.delete(key));
    }
    expect(split.get(key)).toBe(model.get(key));
    expect(split.size).toBe(model.size);
  }
  for (const [key, value] of model) expect(split.get(key)).toBe(value);
});

test("growth and churn: 100,000 keys set, half deleted, set again, all read back as one Map", () => {
  const split = new SplitMap<number>();
  const model = new Map<string, number>();
  // Empty, its parts not made yet.
  expect(split.size).toBe(0);
  expect(split.get("key-0")).toBeUndefined();
  expect(split.delete("key-0")).toBe(false);
  const keyOf = (n: number): string => (n % 2 === 0 ? `key-${n}` : `${n}`);
  for (let n = 0; n < 100_000; n++) {
    split.set(keyOf(n), n);
    model.set(keyOf(n), n);
  }
  expect(split.size).toBe(100_000);
  for (let n = 0; n < 100_000; n += 2) expect(split.delete(keyOf(n))).toBe(model.delete(keyOf(n)));
  // Deleted slots are reused or dropped: a key set again is found once, and a deleted key is gone.
  for (let n = 0; n < 100_000; n += 4) {
    split.set(keyOf(n), -n);
    model.set(keyOf(n), -n);
  }
  expect(split.size).toBe(model.size);
  for (let n = 0; n < 100_000; n++) expect(split.get(keyOf(n))).toBe(model.get(keyOf(n)));
  expect(split.delete("absent")).toBe(false);
});
