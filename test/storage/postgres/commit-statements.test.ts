// Goal: the PostgreSQL store reads an outcome's shard from its id by the one
// id grammar: a well-formed id or receipt gives its shard, and any other text
// (one Number() would read included) is a broken invariant that stops the
// commit rather than a row written to a wrong or made-up shard. A put is
// sent as a patch only when it changes a prefix of the committed value within
// the item header, and the rest is byte for byte the same.

import { expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { changedPrefix, shardOfId } from "../../../src/storage/postgres/commit-statements.ts";
import { malformedIds, malformedReceipts } from "../../support/malformed-ids.ts";

test("an id's or receipt's shard", () => {
  expect(shardOfId("0:0")).toBe(0);
  expect(shardOfId("3:17")).toBe(3);
  expect(shardOfId("12:5:1:2")).toBe(12);
});

test("a malformed id is an assertion, not a shard", () => {
  for (const bad of [...malformedIds, ...malformedReceipts]) expect(() => shardOfId(bad)).toThrow(AssertionError);
});

test("a put patches the committed value only when all it changes lies within the header", () => {
  const base = new Uint8Array(100).map((_, index) => index);
  const change = (at: number[]) => {
    const value = base.slice();
    for (const index of at) value[index] = 255;
    return value;
  };
  expect(changedPrefix(base, base.slice())).toBe(0);
  expect(changedPrefix(base, change([3, 59]))).toBe(60);
  expect(changedPrefix(base, change([0]))).toBe(1);
  expect(changedPrefix(base, change([63]))).toBe(64);
  expect(changedPrefix(base, change([3, 64]))).toBe(-1);
  expect(changedPrefix(base, change([99]))).toBe(-1);
  expect(changedPrefix(base, base.slice(0, 99))).toBe(-1);
  expect(changedPrefix(base.slice(0, 64), base.slice(0, 64))).toBe(-1);
});
