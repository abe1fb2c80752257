// Goal: the cluster client routes an id or receipt by the shard the one id
// grammar reads from it, and a text that is neither (one Number() would read
// included) names no shard, so it goes to any node, which answers it as the
// bad id it is, rather than to the owner of a shard read from its junk.

import { expect, test } from "bun:test";
import { shardOf } from "../../src/client/cluster-client.ts";
import { malformedIds, malformedReceipts } from "../support/malformed-ids.ts";

test("an id's or receipt's shard", () => {
  expect(shardOf("3:17")).toBe(3);
  expect(shardOf("12:5:1:2")).toBe(12);
  expect(shardOf("0:0")).toBe(0);
});

test("a malformed id or receipt names no shard", () => {
  for (const bad of [...malformedIds, ...malformedReceipts]) expect(shardOf(bad)).toBe(-1);
});
