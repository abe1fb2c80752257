// Goal: the PostgreSQL store's copy of committed values finds what was
// committed and nothing else, after deletes, for a shard not loaded, and when
// keys arrive out of order (a cluster node filing its own keys below an
// adopted shard's); a shard is walked in key order either way, each value
// read in place from its page.

import { expect, test } from "bun:test";
import { ItemCache } from "../../../src/storage/postgres/item-cache.ts";
import { ShardValues } from "../../../src/storage/postgres/shard-values.ts";

const value = (byte: number) => new Uint8Array([byte]);

/** A shard's keys in the order readInKeyOrder walks them, each with its value's bytes as read in place. */
function walk(cache: ItemCache, shard: number): Array<[number, number[]]> {
  return [...cache.readInKeyOrder(shard, (key, bytes, start, end): [number, number[]] => [key, [...bytes.subarray(start, end)]])];
}

/** A shard's items as a load reads them. */
function loaded(entries: ReadonlyArray<readonly [number, Uint8Array]>): ShardValues {
  const values = new ShardValues();
  values.load(
    entries.map(([key]) => key),
    entries.map(([, bytes]) => bytes),
  );
  return values;
}

test("keys appended in order: a higher key is absent, every stored key is found, deletes are honoured", () => {
  const cache = new ItemCache(2);
  expect(cache.get(0, 5)).toBeUndefined(); // not loaded
  cache.adopt(0, loaded([[10, value(1)], [20, value(2)]]), new Map());
  expect(cache.get(0, 10)).toEqual(value(1));
  expect(cache.get(0, 20)).toEqual(value(2));
  expect(cache.get(0, 21)).toBeUndefined();
  expect(cache.get(0, 15)).toBeUndefined();
  cache.apply(0, new Map<number, Uint8Array | null>([[30, value(3)], [10, null]]));
  expect(cache.get(0, 30)).toEqual(value(3));
  expect(cache.get(0, 10)).toBeUndefined();
  expect(cache.get(0, 31)).toBeUndefined();
  expect(walk(cache, 0)).toEqual([[20, [2]], [30, [3]]]);
});

test("a key below the highest (out of order) is found, and so is every key after it, the order kept by sorting", () => {
  const cache = new ItemCache(1);
  cache.adopt(0, loaded([[1_000, value(1)]]), new Map());
  cache.apply(0, new Map<number, Uint8Array | null>([[5, value(2)]]));
  expect(cache.get(0, 5)).toEqual(value(2));
  expect(cache.get(0, 1_000)).toEqual(value(1));
  cache.apply(0, new Map<number, Uint8Array | null>([[2_000, value(3)], [7, value(4)]]));
  for (const [key, byte] of [[5, 2], [7, 4], [1_000, 1], [2_000, 3]] as const) expect(cache.get(0, key)).toEqual(value(byte));
  expect(cache.get(0, 3_000)).toBeUndefined();
  expect(walk(cache, 0)).toEqual([[5, [2]], [7, [4]], [1_000, [1]], [2_000, [3]]]);
  // Sorted, the values are still read one at a time as the walk goes (an adoption's steps), not all at once.
  let reads = 0;
  const walking = cache.readInKeyOrder(0, (key) => {
    reads++;
    return key;
  })[Symbol.iterator]();
  expect(reads).toBe(0);
  expect(walking.next().value).toBe(5);
  expect(reads).toBe(1);
});

test("a shard loaded with keys out of order is looked up by probing", () => {
  const cache = new ItemCache(1);
  cache.adopt(0, loaded([[9, value(1)], [3, value(2)]]), new Map());
  expect(cache.get(0, 3)).toEqual(value(2));
  expect(cache.get(0, 9)).toEqual(value(1));
  expect(cache.get(0, 4)).toBeUndefined();
});
