// Goal: a commit's item patches and deletes find their rows by key whatever
// orq_items' statistics say. A queue's table is often analyzed while a drain
// has left it empty (its pages still there); once it refills, a plan built
// on those statistics joined the commit's keys to the whole table (a hash of
// every row, for every commit). The commit statement's plan, read with
// EXPLAIN in exactly that state, must look rows up through the primary key
// and scan orq_items nowhere, and the statement must still write what it names.

import { beforeAll, describe, expect, test } from "bun:test";
import type { ItemKey } from "../../../src/storage/store.ts";
import { commitSql } from "../../../src/storage/postgres/commit-sql.ts";
import { commitStatements, type EncodedCommit } from "../../../src/storage/postgres/commit-statements.ts";
import { openPostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import type { SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

/** Rows the table is refilled with: enough that a whole-table plan and a lookup per key differ by far. */
const rows = 32_000;
/** Shards, all held by the node that commits (as one node of a cluster would). */
const shards = 16;
const valueBytes = 150;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

describe.skipIf(!postgresAvailable())("commit plans on a table analyzed while empty", () => {
  const session = storeSession();
  let sql: SqlClient;

  beforeAll(async () => {
    const url = await session.server().createDatabase("plans");
    const store = await openPostgresStore(storeOptions(url, { shards, shardsDefault: shards }));
    await store.close();
    sql = session.admin(url);
    const fill = `INSERT INTO orq_items (shard, key, value) SELECT g % ${shards}, g, decode(repeat('ab', ${valueBytes}), 'hex') FROM generate_series(1, ${rows}) AS g`;
    // A drained queue: the rows come and go, the table is analyzed empty with its pages still there, then refills.
    await sql.query(fill);
    await sql.query("DELETE FROM orq_items");
    // A node holds every shard, as one node of a cluster would.
    await sql.query("UPDATE orq_shards SET owner = 'n1', epoch = 7, lease_until = now() + interval '1 hour'");
    await sql.query("ANALYZE");
    await sql.query(fill);
  });

  test("the statistics say the refilled table is empty (the state the plans must survive)", async () => {
    const [row] = await sql.query("SELECT reltuples, relpages FROM pg_class WHERE relname = 'orq_items'");
    expect(Number(row?.[0])).toBe(0);
    expect(Number(row?.[1])).toBeGreaterThan(0);
  });

  test("patches and deletes of 400 keys each look their rows up by key and scan orq_items nowhere; the statement writes them", async () => {
    const committed = new Map<ItemKey, Uint8Array>();
    // Keys spread over every shard (key % shards): 400 deletes, then 400 patches of the header's first bytes.
    const writes = Array.from({ length: shards }, () => new Map<ItemKey, Uint8Array | null>());
    for (let i = 0; i < 800; i++) {
      const key = 1 + ((i * 3701 + 11) % rows);
      const shardWrites = writes[key % shards]!;
      if (i < 400) {
        shardWrites.set(key, null);
        continue;
      }
      const base = new Uint8Array(valueBytes).fill(0xab);
      const value = base.slice();
      value[0] = (i % 100) + 1; // never the base's byte: every patch changes something
      committed.set(key, base);
      shardWrites.set(key, value);
    }
    const encoded: EncodedCommit = { shards: new Map(writes.map((each, shard) => [shard, each])), outcomes: new Map() };
    const parts = commitStatements(encoded, (_shard, key) => committed.get(key) ?? null);
    // As a cluster node sends it: fenced by its hold on every shard.
    const all = Array.from({ length: shards }, (_, shard) => shard);
    const statement = commitSql(parts, all, { nodeId: "n1", held: new Map(all.map((shard) => [shard, 7])) });
    const [explained] = await sql.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params);
    // The client hands json back parsed.
    const cell = explained?.[0];
    const plan = ((typeof cell === "string" ? JSON.parse(cell) : cell) as Array<{ Plan: PlanNode }>)[0]!.Plan;
    const nodes = nodesOf(plan);
    const onItems = nodes.filter((node) => node["Relation Name"] === "orq_items");
    expect(onItems.length).toBeGreaterThan(0);
    expect(onItems.filter((node) => node["Node Type"] === "Seq Scan")).toEqual([]);
    // Hash and merge joins may pair the keys with the fenced shards (small), never with orq_items' rows.
    const wholeTableJoins = nodes.filter(
      (node) => (node["Node Type"] === "Hash Join" || node["Node Type"] === "Merge Join") && nodesOf(node).some((under) => under["Relation Name"] === "orq_items"),
    );
    expect(wholeTableJoins).toEqual([]);
    // orq_items is read only by a lookup of one key through the primary key, or by the ctid such a lookup found:
    // no walk of a shard's or the table's rows, however the planner ranks it.
    const lookups = onItems.filter((node) => node["Node Type"] === "Index Scan" || node["Node Type"] === "Index Only Scan");
    expect(lookups.length).toBeGreaterThanOrEqual(2);
    for (const lookup of lookups) {
      expect(lookup["Index Name"]).toBe("orq_items_pkey");
      expect(lookup["Index Cond"] ?? "").toMatch(/shard = .*key = |key = .*shard = /);
    }
    const reads = onItems.filter((node) => node["Node Type"] !== "ModifyTable");
    expect(reads.filter((node) => !["Index Scan", "Index Only Scan", "Tid Scan"].includes(node["Node Type"])).map((node) => node["Node Type"])).toEqual([]);

    const [counts] = await sql.query(statement.text, statement.params);
    // After the shards that passed the fence: the patch's rows, its check (0: it wrote every row it named), the delete's rows.
    expect(counts?.slice(1).map(Number)).toEqual([400, 0, 400]);
    const [left] = await sql.query("SELECT count(*) FROM orq_items");
    expect(Number(left?.[0])).toBe(rows - 400);
  });
});
