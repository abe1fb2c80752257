// Goal: remoteEnds asks the database for the rows of exactly the shards and
// keys its ids name, read by the one id grammar, and a text that is not an id
// (one Number() would read included) is a broken invariant: nothing is asked.
// The database is a recording stand-in; no PostgreSQL is needed.

import { expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { remoteEnds } from "../../../src/storage/postgres/remote-ends.ts";
import type { SqlRow, SqlSession } from "../../../src/storage/postgres/sql-client.ts";
import { malformedIds } from "../../support/malformed-ids.ts";

/** A session that answers every pipeline with no rows and keeps what it was asked. */
function recordingSession(): SqlSession & { asked: Array<ReadonlyArray<{ text: string; params?: readonly unknown[] }>> } {
  const asked: Array<ReadonlyArray<{ text: string; params?: readonly unknown[] }>> = [];
  return {
    asked,
    query: () => Promise.reject(new Error("remoteEnds sends pipelines only")),
    pipeline: (statements) => {
      asked.push(statements);
      return Promise.resolve(statements.map((): SqlRow[] => []));
    },
  };
}

test("the shards and keys asked for are the ids' own; ids with no row count as acked", async () => {
  const sql = recordingSession();
  const ends = await remoteEnds(sql, ["3:17", "0:9007199254740991"]);
  expect(sql.asked.length).toBe(1);
  expect(sql.asked[0]![0]!.params).toEqual([["3:17", "0:9007199254740991"]]);
  expect(sql.asked[0]![1]!.params).toEqual([
    [3, 0],
    [17, 9007199254740991],
  ]);
  expect([...ends]).toEqual([
    ["3:17", "acked"],
    ["0:9007199254740991", "acked"],
  ]);
});

test("a malformed id is an assertion, and nothing is asked", async () => {
  for (const bad of malformedIds) {
    const sql = recordingSession();
    await expect(remoteEnds(sql, ["3:17", bad])).rejects.toThrow(AssertionError);
    expect(sql.asked).toEqual([]);
  }
});
