// Goal: the commit's fence verdict (commit-sql.ts, decision 047): a shard the
// commit writes but this node does not hold is "not held"; a held shard the
// statement's `ok` part left out is fenced, named with the ownership row read
// after the commit (or without it when that read failed); a held shard that
// passed is not fenced. And the statement asks for the held shards' epochs at
// their places, returns only `ok`'s shards, and reads them back in order.

import { expect, test } from "bun:test";
import { commitSql, failedFence, fencedShards, readCommitAnswer } from "../../../src/storage/postgres/commit-sql.ts";
import type { Statement } from "../../../src/storage/postgres/commit-statements.ts";

const held = new Map([
  [1, 4],
  [2, 9],
  [5, 2],
]);

test("held shards left out of ok are fenced; shards not held never pass", () => {
  expect(failedFence(held, [1, 2, 5])).toEqual([]);
  expect(failedFence(held, [5, 1])).toEqual([2]);
  const rows = new Map([[2, { owner: "n7", epoch: 10 }]]);
  const verdict = fencedShards(held, [1, 2, 3], failedFence(held, [1, 5]), rows);
  expect([...verdict]).toEqual([
    [3, "not held"],
    [2, "now n7 at epoch 10, held at epoch 9"],
  ]);
  expect([...fencedShards(held, [2], failedFence(held, [1, 5]), new Map())]).toEqual([[2, "no shard row"]]);
  expect([...fencedShards(held, [2], failedFence(held, [1, 5]), null)]).toEqual([[2, "no longer this node's at epoch 9"]]);
  expect([...fencedShards(held, [1, 2, 5], failedFence(held, [1, 2, 5]), new Map())]).toEqual([]);
});

test("the fenced statement sends shards and epochs side by side and reads back ok's shards, then each part's count", () => {
  const part: Statement = { text: "INSERT INTO t SELECT * FROM unnest($1::integer[]) AS v(s) WHERE v.s IN (SELECT shard FROM ok) RETURNING 1", params: ["{1}"] };
  const statement = commitSql([part], [1, 2], { nodeId: "n1", held });
  expect(statement.params.slice(0, 4)).toEqual([[1, 2, 5], [4, 9, 2], "n1", "{1}"]);
  expect(statement.text).toContain("o.epoch = ($2::bigint[])[array_position($1::integer[], o.shard)] FOR SHARE");
  expect(statement.text).toContain("unnest($4::integer[])");
  expect(statement.text).toMatch(/SELECT \(SELECT array_agg\(shard\) FROM ok\), \(SELECT count\(\*\) FROM w0\)$/);
  const answer = readCommitAnswer([[1, 5], "3"], [part], true);
  expect(answer).toEqual({ okShards: [1, 5], counts: [3], pairs: [[]] });
  // None passed: PostgreSQL's array_agg of no rows is NULL.
  expect(readCommitAnswer([null, "0"], [part], true).okShards).toEqual([]);
});
