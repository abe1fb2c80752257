// Goal: the PostgreSQL store's uncertain keys (src/storage/postgres/uncertain-keys.ts):
// every key a failed commit wrote is uncertain until a committed write of it
// (not one a fence refused) or a load of its shard; other keys and shards
// are untouched.

import { describe, expect, test } from "bun:test";
import type { EncodedCommit } from "../../../src/storage/postgres/commit-statements.ts";
import { UncertainKeys } from "../../../src/storage/postgres/uncertain-keys.ts";

function commit(writes: Record<number, number[]>): EncodedCommit {
  const shards = new Map<number, Map<number, Uint8Array | null>>();
  for (const [shard, keys] of Object.entries(writes)) shards.set(Number(shard), new Map(keys.map((key) => [key, null])));
  return { shards, outcomes: new Map() };
}

describe("uncertain keys", () => {
  test("a failed commit's keys stay uncertain until a committed write of each, or a load of their shard", () => {
    const keys = new UncertainKeys();
    keys.failed(commit({ 1: [10, 11], 2: [20] }));
    expect([keys.has(1, 10), keys.has(1, 11), keys.has(2, 20), keys.has(1, 12), keys.has(3, 10)]).toEqual([true, true, true, false, false]);

    // Landed, except in shard 2 (fenced): shard 1's written key is certain, shard 2's stays uncertain.
    keys.committed(commit({ 1: [10], 2: [20] }), new Map([[2, new Error("fenced")]]));
    expect([keys.has(1, 10), keys.has(1, 11), keys.has(2, 20)]).toEqual([false, true, true]);

    keys.forgetShard(2);
    expect(keys.has(2, 20)).toBe(false);
    keys.committed(commit({ 1: [11] }), new Map());
    expect(keys.has(1, 11)).toBe(false);
  });
});
