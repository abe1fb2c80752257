// Goal: a shard's item values packed into pages read back byte for byte
// (empty values, values over many pages, a value larger than a page); a value
// read out stays as it was whatever is written after; a page is let go when
// nothing in it is live, and a closed page less than half live has its values
// moved; and, in a seeded model of loads, sets and deletes, every key reads
// its latest value after every step while the pages hold at most twice the
// live bytes plus the open page.

import { expect, test } from "bun:test";
import { ShardValues, valuePageBytes } from "../../../src/storage/postgres/shard-values.ts";

/** A value of `length` bytes that differs from key to key and write to write. */
function valueOf(seed: number, length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, at) => (seed * 31 + at * 7) & 0xff);
}

test("loaded values read back exactly, over many pages, with empty and oversized values", () => {
  const values = new ShardValues();
  const keys: number[] = [];
  const bytes: Uint8Array[] = [];
  for (let key = 0; key < 12_000; key++) {
    keys.push(key);
    bytes.push(valueOf(key, key % 97 === 0 ? 0 : 150 + (key % 300)));
  }
  keys.push(50_000);
  bytes.push(valueOf(50_000, valuePageBytes + 10)); // a page of its own size
  values.load(keys, bytes);
  expect(values.size).toBe(keys.length);
  // About 3.8 MB of values in 256 KiB pages, and the oversized one.
  expect(values.pagesHeld).toBeGreaterThanOrEqual(15);
  for (let i = 0; i < keys.length; i++) expect(values.get(keys[i] as number)).toEqual(bytes[i] as Uint8Array);
  expect(values.get(12_000)).toBeUndefined();
  expect([...values.entries()].map(([key]) => key)).toEqual(keys);
});

test("a value read out stays as it was while the key is written again and its page is let go", () => {
  const values = new ShardValues();
  values.load([1], [valueOf(1, 100)]);
  const read = values.get(1) as Uint8Array;
  for (let write = 0; write < 5_000; write++) values.set(1, valueOf(write, 100));
  expect(read).toEqual(valueOf(1, 100));
  expect(values.get(1)).toEqual(valueOf(4_999, 100));
  // 5,001 writes of 104 bytes filled two pages; what is left is the open page and at most the one before.
  expect(values.pagesHeld).toBeLessThanOrEqual(2);
});

test("a closed page is let go when empty, and has its values moved once less than half of it is live", () => {
  const values = new ShardValues();
  const size = valuePageBytes / 4 - 4; // four values fill a page exactly
  const keys = [1, 2, 3, 4, 5, 6, 7, 8, 9];
  values.load(keys, keys.map((key) => valueOf(key, size)));
  expect(values.pagesHeld).toBe(3); // 1-4, 5-8, and 9 in the open page
  values.delete(1);
  expect(values.pagesHeld).toBe(3); // three quarters live
  values.delete(2);
  expect(values.pagesHeld).toBe(3); // half live
  expect(values.set(3, valueOf(103, 3))).toBe(false); // replaced, not new: a quarter live, so 4 moves
  expect(values.pagesHeld).toBe(2);
  expect(values.get(3)).toEqual(valueOf(103, 3));
  expect(values.get(4)).toEqual(valueOf(4, size));
  for (const key of [5, 6, 7, 8]) values.delete(key);
  expect(values.pagesHeld).toBe(1);
  expect(values.set(10, valueOf(10, 2))).toBe(true);
  values.delete(99); // not held: nothing happens
  expect([...values.entries()]).toEqual([
    [3, valueOf(103, 3)],
    [4, valueOf(4, size)],
    [9, valueOf(9, size)],
    [10, valueOf(10, 2)],
  ]);
});

test("a second load of a key already held is refused", () => {
  const values = new ShardValues();
  values.load([1, 2], [valueOf(1, 4), valueOf(2, 4)]);
  expect(() => values.load([3, 2], [valueOf(3, 4), valueOf(2, 4)])).toThrow("loaded twice");
  expect(() => values.load([4], [])).toThrow("one value per loaded key");
});

test("seeded model: every key reads its latest value after every step, and the pages hold at most twice the live bytes plus the open page", () => {
  for (const seed of [1, 2, 3]) {
    let state = seed;
    const random = (below: number): number => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state % below;
    };
    const values = new ShardValues();
    const model = new Map<number, Uint8Array>();
    let liveBytes = 0;
    let largest = 0;
    let nextKey = 0;
    const put = (key: number, value: Uint8Array): void => {
      liveBytes += 4 + value.length - (model.has(key) ? 4 + (model.get(key) as Uint8Array).length : 0);
      largest = Math.max(largest, 4 + value.length);
      model.set(key, value);
    };
    for (let step = 0; step < 6_000; step++) {
      const roll = random(100);
      const touched: number[] = [];
      if (roll < 3) {
        // A load of new keys (an adopted shard's page).
        const keys = Array.from({ length: 1 + random(300) }, () => nextKey++);
        const bytes = keys.map((key) => valueOf(key, random(600)));
        values.load(keys, bytes);
        keys.forEach((key, at) => put(key, bytes[at] as Uint8Array));
        touched.push(...keys);
      } else if (roll < 50 || model.size === 0) {
        const key = model.size > 0 && random(2) === 0 ? random(nextKey) : nextKey++;
        // Now and then a value larger than a page.
        const value = valueOf(step, random(300) === 0 ? valuePageBytes + random(1_000) : random(600));
        expect(values.set(key, value)).toBe(!model.has(key));
        put(key, value);
        touched.push(key);
      } else {
        const key = random(nextKey);
        values.delete(key);
        if (model.has(key)) liveBytes -= 4 + (model.get(key) as Uint8Array).length;
        model.delete(key);
        touched.push(key);
      }
      // The keys the step touched and a sample of the others; every key now and then.
      for (let i = 0; i < 20; i++) touched.push(random(nextKey));
      for (const key of step % 500 === 0 ? model.keys() : touched) expect(values.get(key)).toEqual(model.get(key));
      expect(values.size).toBe(model.size);
      expect(values.pageBytes).toBeLessThanOrEqual(2 * liveBytes + Math.max(valuePageBytes, largest));
    }
    for (const [key, value] of values.entries()) expect(value).toEqual(model.get(key) as Uint8Array);
    expect([...values.keys()].length).toBe(model.size);
  }
});
