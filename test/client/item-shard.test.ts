// Goal: the cluster client sends an item to the shard the contract places it
// on: a grouped item to fnv1a32(ns 0x00 topic 0x00 group) mod shards, before
// its key's rule and its `after` rule; a keyed item to its key's hash; an
// `after` item to its first dependency's shard; any other item anywhere (-1).
// The hashes are checked against values computed outside the client (FNV-1a by
// hand), the same vectors clients/python/test_orq_cluster.py checks.

import { describe, expect, test } from "bun:test";
import { itemShard } from "../../src/client/item-shard.ts";

describe("itemShard", () => {
  test("a group's shard is the contract's hash of ns, topic and group", () => {
    // fnv1a32("shop\0emails\0acme") = 0x19403e4c; "globex": 0x4875428d.
    expect(itemShard("shop", { topic: "emails", group: "acme" }, 16)).toBe(0x19403e4c % 16);
    expect(itemShard("shop", { topic: "emails", group: "acme" }, 6)).toBe(0x19403e4c % 6);
    expect(itemShard("shop", { topic: "emails", group: "globex" }, 16)).toBe(0x4875428d % 16);
  });

  test("group takes precedence over key and after", () => {
    // fnv1a32("shop\0emails\0order-1") = 0xaa1ab944: shard 4 of 16, where the group's is 12.
    expect(itemShard("shop", { topic: "emails", key: "order-1" }, 16)).toBe(4);
    expect(itemShard("shop", { topic: "emails", key: "order-1", group: "acme" }, 16)).toBe(12);
    expect(itemShard("shop", { topic: "emails", after: ["3:17"], group: "acme" }, 16)).toBe(12);
  });

  test("without a group: key, then the first after id, then any shard", () => {
    expect(itemShard("shop", { topic: "emails", key: "order-1", after: ["3:17"] }, 16)).toBe(4);
    expect(itemShard("shop", { topic: "emails", after: ["3:17", "5:1"] }, 16)).toBe(3);
    expect(itemShard("shop", { topic: "emails" }, 16)).toBe(-1);
    expect(itemShard("shop", { topic: "emails", after: ["not-an-id"] }, 16)).toBe(-1);
  });

  test("every group of a topic lands on a shard in range, and the same group always on the same one", () => {
    for (let i = 0; i < 200; i++) {
      const shard = itemShard("ns", { topic: "t", group: `tenant-${i}` }, 7);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(7);
      expect(itemShard("ns", { topic: "t", group: `tenant-${i}`, key: `k${i}` }, 7)).toBe(shard);
    }
  });
});
