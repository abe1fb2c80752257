// One shard's rows as a node reads them when it takes the shard on
// (PostgresStore.adoptShard): its items, outcomes, schedules and acked
// blocks, and a read of them ahead of the claim.
//
// Why ahead: a node that takes over a dead node's shards waits out the dead
// node's lease (up to shard_lease_ms) doing nothing, then reads and files
// every item, and the contract gives it 2 s after the lease for all of that
// (decisions/041). Once another node's lease on a shard has gone unrenewed
// for a while (ShardOwnership.silentShards), a node that would claim it reads
// its rows during that wait. The read is kept only if nothing of the shard
// changed since it began, which is checked after the claim, when the claim's
// new epoch has fenced the old owner out (shard-fence.ts): an owner that was
// only slow or paused may have committed in the meantime, and then the shard
// is read again in full (decisions/050).
//
// The check: the rows every table holds for the shard are as many as the
// early read found, and none was written by a transaction that was still
// running when the early read began (its xmin is at or past that read's
// snapshot xmin). An insert or update writes a row with such an xmin; a
// delete lowers the count unless an insert makes up for it, which the xmin
// test then sees. Each step of the early read reads its own snapshot, later than
// the horizon, so a change in between errs toward reading again.

import { clusterLimits } from "../../limits.ts";
import { loadBlocksSql } from "./acked-blocks.ts";
import { ShardValues } from "./shard-values.ts";
import { byteaValue, byteaView, int8Value, type SqlClient, type SqlRow } from "./sql-client.ts";

const { loadPageRows } = clusterLimits;

/** A shard's rows, as read. */
export interface ShardRows {
  items: ShardValues;
  outcomes: Map<string, Uint8Array>;
  schedules: Map<string, Uint8Array>;
  blocks: Array<{ seq: number; value: Uint8Array }>;
}

/** A shard's rows read ahead of its claim, with what the check after the claim compares. */
export interface EarlyShardRows {
  rows: ShardRows;
  /** The early read's snapshot xmin, as the 32-bit xid rows carry in xmin. */
  horizonXid: number;
  /** Rows read per table, in checkSql's order: items, outcomes, schedules, acked blocks. */
  counts: number[];
}

/** Read the shard's rows: items, outcomes and acked blocks in pages of loadPageRows, keyset-paginated in key order. */
export async function readShardRows(client: SqlClient, shard: number): Promise<ShardRows> {
  // Each page of rows is copied into a few large buffers, not an array per value (shard-values.ts).
  const items = new ShardValues();
  await readPages(client, "SELECT key, value FROM orq_items WHERE shard = $1 AND key > $2 ORDER BY key LIMIT $3", shard, -1, int8Value, (rows) =>
    items.load(
      rows.map((row) => int8Value(row[0])),
      rows.map((row) => byteaView(row[1])),
    ),
  );
  const outcomes = new Map<string, Uint8Array>();
  await readPages(client, "SELECT id, value FROM orq_outcomes WHERE shard = $1 AND id > $2 ORDER BY id LIMIT $3", shard, "", String, (rows) => {
    for (const row of rows) outcomes.set(String(row[0]), byteaValue(row[1]));
  });
  const schedules = new Map<string, Uint8Array>();
  for (const row of await client.query("SELECT key, value FROM orq_schedules WHERE shard = $1", [shard])) schedules.set(String(row[0]), byteaValue(row[1]));
  const blocks: Array<{ seq: number; value: Uint8Array }> = [];
  await readPages(client, loadBlocksSql, shard, -1, int8Value, (rows) => {
    for (const row of rows) blocks.push({ seq: int8Value(row[0]), value: byteaValue(row[1]) });
  });
  return { items, outcomes, schedules, blocks };
}

/**
 * Run `sql` ($1 the shard, $2 the last key read, $3 the page size; ordered
 * by its first column) page after page from `first`, handing each page to
 * `take`, until a page comes back short.
 */
async function readPages<K extends number | string>(
  client: SqlClient,
  sql: string,
  shard: number,
  first: K,
  keyOf: (value: unknown) => K,
  take: (rows: SqlRow[]) => void,
): Promise<void> {
  for (let after = first; ; ) {
    const rows = await client.query(sql, [shard, after, loadPageRows]);
    take(rows);
    if (rows.length < loadPageRows) return;
    after = keyOf(rows[rows.length - 1]?.[0]);
  }
}

/** Read the shard's rows ahead of a claim, noting the horizon the check after the claim needs. */
export async function readShardRowsEarly(client: SqlClient, shard: number): Promise<EarlyShardRows> {
  const horizon = await client.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text");
  // An xid8 is the epoch in its high 32 bits and the xid a row's xmin shows in its low 32.
  const horizonXid = Number(BigInt(String(horizon[0]?.[0])) & 0xffff_ffffn);
  const rows = await readShardRows(client, shard);
  return { rows, horizonXid, counts: [rows.items.size, rows.outcomes.size, rows.schedules.size, rows.blocks.length] };
}

/**
 * Per table (items, outcomes, schedules, acked blocks), two columns: the
 * shard's rows, and those written by a transaction at or past the horizon
 * $2 (as text). `age` counts transactions back from now, so a row is that
 * new when its xmin is no older than the horizon; it is integer arithmetic
 * modulo 2^32, and PostgreSQL's special ids (0-2) are older than any. Going
 * through text and bigint instead took 187-209 ms over 500,000 rows, this
 * 75-77 (decisions/052).
 */
const checkSql = (() => {
  const fresh = "age(xmin) <= age($2::text::xid)";
  const tables = ["orq_items", "orq_outcomes", "orq_schedules", "orq_acked"];
  const parts = tables.map((table, at) => `(SELECT count(*) AS n${at}, count(*) FILTER (WHERE ${fresh}) AS f${at} FROM ${table} WHERE shard = $1) AS t${at}`);
  return `SELECT * FROM ${parts.join(", ")}`;
})();

/** Whether nothing of the shard changed since `early` began (to be asked once this node's claim of the shard has committed). */
export async function unchangedSince(client: SqlClient, shard: number, early: EarlyShardRows): Promise<boolean> {
  const rows = await client.query(checkSql, [shard, String(early.horizonXid)]);
  const row = rows[0];
  if (row === undefined) return false;
  return early.counts.every((count, table) => int8Value(row[2 * table]) === count && int8Value(row[2 * table + 1]) === 0);
}
