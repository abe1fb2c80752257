// Goal: the PostgreSQL store reads an outcome's shard from its id by the one
// id grammar: a well-formed id or receipt gives its shard, and any other text
// (one Number() would read included) is a broken invariant that stops the
// commit rather than a row written to a wrong or made-up shard.

import { expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { shardOfId } from "../../../src/storage/postgres/commit-statements.ts";
import { malformedIds, malformedReceipts } from "../../support/malformed-ids.ts";

test("an id's or receipt's shard", () => {
  expect(shardOfId("0:0")).toBe(0);
  expect(shardOfId("3:17")).toBe(3);
  expect(shardOfId("12:5:1:2")).toBe(12);
});

test("a malformed id is an assertion, not a shard", () => {
  for (const bad of [...malformedIds, ...malformedReceipts]) expect(() => shardOfId(bad)).toThrow(AssertionError);
});
