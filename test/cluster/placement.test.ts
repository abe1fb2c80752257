// Goal: cluster placement puts an item of a group on its group's shard,
// fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(group)) mod shards, before the
// key's rule and the `after` rule (a keyed or dependent item of a group lives
// with its group); without a group the key's rule and then `after`'s apply as
// before, and a plain item may go anywhere (-1). A schedule lives on its
// item's group's shard when the item names a group, else on its name's shard,
// fnv1a32(utf8(ns) 0x00 utf8(name)) mod shards.

import { describe, expect, test } from "bun:test";
import { clusterPlacement } from "../../src/cluster/placement.ts";
import type { EnqueueItemInput } from "../../src/engine/api.ts";
import { fnv1a32, shardOfGroup, shardOfKey, shardOfSchedule } from "../../src/protocol/key-shard.ts";

const encoder = new TextEncoder();

function item(extra: { key?: string; after?: string[]; group?: string | null } = {}): EnqueueItemInput {
  return {
    topic: "emails",
    priority: 0,
    payload: encoder.encode("x"),
    metadata: new Uint8Array(0),
    deliverAtMs: null,
    delayMs: null,
    leaseMs: null,
    ttlMs: null,
    delivery: "at_least_once",
    maxAttempts: 10,
    requires: null,
    after: extra.after ?? null,
    key: extra.key ?? null,
    group: extra.group ?? null,
  };
}

describe("group placement", () => {
  test("a group hashes ns, topic and group with NUL separators, as a key does", () => {
    // fnv1a32("shop\0emails\0acme") = 0x19403e4c; "globex": 0x4875428d.
    expect(fnv1a32(encoder.encode("shop\u0000emails\u0000acme"))).toBe(0x19403e4c);
    expect(shardOfGroup("shop", "emails", "acme", 16)).toBe(0x19403e4c % 16);
    expect(shardOfGroup("shop", "emails", "globex", 16)).toBe(0x4875428d % 16);
    expect(shardOfGroup("shop", "emails", "acme", 7)).toBe(shardOfKey("shop", "emails", "acme", 7));
    const utf8 = "ü\u{1F600}";
    expect(shardOfGroup("é", "t", utf8, 13)).toBe(fnv1a32(encoder.encode(`é\u0000t\u0000${utf8}`)) % 13);
  });

  test("an item of a group lives on the group's shard, whatever its key or `after`", () => {
    const placement = clusterPlacement(16, () => true);
    const groupShard = shardOfGroup("shop", "emails", "acme", 16);
    expect(placement.shardFor("shop", item({ group: "acme" }))).toBe(groupShard);
    // The key alone would go elsewhere: fnv1a32("shop\0emails\0order-1") = 0xaa1ab944, shard 4 of 16, where the group's is 12.
    expect(shardOfKey("shop", "emails", "order-1", 16)).toBe(4);
    expect(groupShard).toBe(12);
    expect(placement.shardFor("shop", item({ group: "acme", key: "order-1" }))).toBe(groupShard);
    expect(placement.shardFor("shop", item({ group: "acme", after: ["3:9"] }))).toBe(groupShard);
    expect(placement.shardFor("shop", item({ group: "acme", key: "order-1", after: ["3:9"] }))).toBe(groupShard);
    // Every item of the group, keyed or not, shares the one shard.
    for (let i = 0; i < 20; i++) expect(placement.shardFor("shop", item({ group: "acme", key: `k${i}` }))).toBe(groupShard);
  });

  test("without a group: the key's shard, else the first `after` id's, else any (-1)", () => {
    const placement = clusterPlacement(16, () => true);
    expect(placement.shardFor("shop", item({ key: "order-1" }))).toBe(4);
    expect(placement.shardFor("shop", item({ key: "order-1", after: ["3:9"] }))).toBe(4);
    expect(placement.shardFor("shop", item({ after: ["3:9"] }))).toBe(3);
    expect(placement.shardFor("shop", item())).toBe(-1);
    expect(placement.shardFor("shop", item({ group: null }))).toBe(-1);
    // An input without the field at all (a caller that predates groups) is a plain item.
    const { group: _group, ...withoutGroup } = item();
    expect(placement.shardFor("shop", withoutGroup as EnqueueItemInput)).toBe(-1);
  });
});

describe("schedule placement", () => {
  test("a schedule whose item names no group lives on its name's shard, fnv1a32(ns 0 name) mod shards", () => {
    const placement = clusterPlacement(16, () => true);
    // fnv1a32("shop\0digest") = 0x3da7b1fb: shard 11 of 16.
    expect(fnv1a32(encoder.encode("shop\u0000digest"))).toBe(0x3da7b1fb);
    expect(placement.scheduleShard("shop", "digest", { topic: "emails", group: null })).toBe(11);
    expect(shardOfSchedule("shop", "digest", { topic: "emails", group: null }, 16)).toBe(11);
    // The item's topic does not move it.
    expect(placement.scheduleShard("shop", "digest", { topic: "other", group: null })).toBe(11);
  });

  test("a schedule whose item names a group lives on the group's shard, whatever its name", () => {
    const placement = clusterPlacement(16, () => true);
    const groupShard = shardOfGroup("shop", "emails", "acme", 16);
    expect(groupShard).toBe(12);
    expect(placement.scheduleShard("shop", "digest", { topic: "emails", group: "acme" })).toBe(12);
    for (const name of ["a", "b", "nightly", "rollup", "ü\u{1F600}"]) expect(placement.scheduleShard("shop", name, { topic: "emails", group: "acme" })).toBe(groupShard);
    // Where a plain item of the group goes: the ticks' items share the schedule's shard and their group's.
    expect(placement.shardFor("shop", item({ group: "acme" }))).toBe(placement.scheduleShard("shop", "digest", { topic: "emails", group: "acme" }));
    // Another topic's group of the same name is another group, hashed with its topic.
    expect(placement.scheduleShard("shop", "digest", { topic: "sms", group: "acme" })).toBe(shardOfGroup("shop", "sms", "acme", 16));
  });
});
