// Goal: the PostgreSQL store reads an outcome's shard from its id by the one
// id grammar: a well-formed id or receipt gives its shard, and any other text
// (one Number() would read included) is a broken invariant that stops the
// commit rather than a row written to a wrong or made-up shard. A put is
// sent as a patch only when it changes a prefix of the committed value within
// the item header, and the rest is byte for byte the same, for small values
// (compared in a loop) and large ones (compared natively) alike. A key known
// to have no row is a plain insert; one whose row is not known, an upsert.

import { expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { changedPrefix, commitStatements, type EncodedCommit, shardOfId } from "../../../src/storage/postgres/commit-statements.ts";
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

test("a large value's rest is compared natively, with the same answers", () => {
  const base = new Uint8Array(5000).map((_, index) => index % 251);
  const change = (at: number[]) => {
    const value = base.slice();
    for (const index of at) value[index] = (value[index] as number) ^ 0xff;
    return value;
  };
  expect(changedPrefix(base, base.slice())).toBe(0);
  expect(changedPrefix(base, change([5, 40]))).toBe(41);
  expect(changedPrefix(base, change([5, 4999]))).toBe(-1);
  expect(changedPrefix(base, change([600]))).toBe(-1);
  expect(changedPrefix(base, change([64]))).toBe(-1);
  // At the loop's edge: 64 + 512 bytes, the rest compared in the loop; one byte more, natively.
  for (const length of [576, 577]) {
    const edge = base.slice(0, length);
    const changed = edge.slice();
    changed[length - 1] = (changed[length - 1] as number) ^ 1;
    expect(changedPrefix(edge, changed)).toBe(-1);
    changed[length - 1] = edge[length - 1] as number;
    changed[63] = (changed[63] as number) ^ 1;
    expect(changedPrefix(edge, changed)).toBe(64);
  }
});

test("each put goes to the statement its committed value calls for: insert, upsert, patch or nothing", () => {
  const value = (first: number) => new Uint8Array(100).map((_, index) => (index === 0 ? first : index));
  const committed = new Map<number, Uint8Array | null>([
    [2, null], // a failed commit wrote it: unknown
    [3, value(1)], // known: only the first byte changes below
    [4, value(9)], // known: written again unchanged
  ]);
  const encoded: EncodedCommit = {
    shards: new Map([[0, new Map<number, Uint8Array | null>([[1, value(5)], [2, value(5)], [3, value(5)], [4, value(9)], [7, null]])]]),
    outcomes: new Map(),
  };
  const parts = commitStatements(encoded, (_shard, key) => (committed.has(key) ? committed.get(key) : undefined));
  const kind = (text: string) =>
    text.startsWith("INSERT INTO orq_items") ? (text.includes("ON CONFLICT") ? "upsert" : "insert") : text.startsWith("UPDATE orq_items") ? "patch" : text.startsWith("DELETE FROM orq_items") ? "delete" : text;
  expect(parts.map((part) => [kind(part.text), part.params[1]])).toEqual([
    ["insert", "{1}"],
    ["upsert", "{2}"],
    ["patch", "{3}"],
    ["delete", "{7}"],
  ]);
});
