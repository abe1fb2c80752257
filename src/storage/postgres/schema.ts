// The PostgreSQL schema of orq's store, and the meta row's life at open. The
// first process to find an empty database creates every table and the shard
// rows under a transaction-scoped advisory lock (so two nodes starting at once
// do not race); later ones check the layout version and the shard count.
//
// Tables (no secondary indexes: ready order lives in memory):
// - orq_meta: one row; layout version, shard count, cluster id (the store's
//   MetaRecord.nodeId), the key reservation, and the open counter (boots).
// - orq_items (shard, key) -> value: an item record's bytes, as LMDB holds them.
//   Fillfactor 80 leaves room on each page so a lease's update stays HOT.
// - orq_outcomes id -> (shard, value): ended items' outcomes, except acks.
// - orq_acked (shard, seq) -> (ended_at_ms, value): acked items, as blocks of
//   keys per shard (acked-blocks.ts). Added after layout version 1 was first
//   shipped, as orq_quota_buckets below was; a build before it wrote acked
//   items as outcome rows, which still load as such.
// - orq_shards (shard, owner, epoch, lease_until): who serves each shard
//   (cluster mode; see shard-ownership.ts).
// - orq_nodes (node_id, addr, incarnation, heartbeat_at, lease_ms): the
//   nodes; one is live while its last heartbeat is younger than its own lease.
// - orq_pauses key -> value, and orq_pause_version: pauses of topics and
//   groups and the counter their commits raise (pause-rows.ts).
// - orq_policies key -> value, and orq_policy_version: policies and the
//   counter their commits raise (policy-rows.ts). Added after layout
//   version 1 was first shipped, as orq_quota_buckets below was.
// - orq_schedules key -> (shard, value): schedules, each read by its
//   shard's owner (schedule-rows.ts). Added the same way as
//   orq_quota_buckets below.
// - orq_quota_buckets ns -> tokens: the namespaces' cluster-wide quota
//   buckets nodes draw tokens from (quota-rows.ts). Added after layout
//   version 1 was first shipped, without a version change: it is only ever
//   created (IF NOT EXISTS, at every open), so a database of the previous
//   build gains it at the first open of this one, and the previous build
//   ignores it (docs/CLUSTER.md, "Upgrading").
// - orq_rate_buckets, orq_topic_slots, orq_shard_slots: topics' own rate
//   and max_leased shared by the nodes (topic-bound-rows.ts). Added the same
//   way as orq_quota_buckets, and ignored by a build before them.

import { createAckedTableSql } from "./acked-blocks.ts";
import { createPauseTablesSql } from "./pause-rows.ts";
import { createPolicyTablesSql } from "./policy-rows.ts";
import { createScheduleTableSql } from "./schedule-rows.ts";
import { createQuotaBucketsSql } from "./quota-rows.ts";
import { createTopicBoundTablesSql } from "./topic-bound-rows.ts";
import { randomBytes } from "node:crypto";
import type { MetaRecord } from "../record.ts";
import { FORMAT_VERSION } from "../store-meta.ts";
import { StoreOpenError } from "../store.ts";
import { int8Value, type SqlClient, type SqlSession } from "./sql-client.ts";

/** Advisory lock key (any fixed bigint) serialising schema creation between nodes. */
const schemaLockKey = 0x6f72_7101;

const createStatements = [
  ...createPauseTablesSql,
  ...createPolicyTablesSql,
  createScheduleTableSql,
  createQuotaBucketsSql,
  ...createTopicBoundTablesSql,
  createAckedTableSql,
  // Raises its message: how a check inside one commit statement fails the statement (commit-sql.ts).
  `CREATE OR REPLACE FUNCTION orq_raise(message text) RETURNS integer LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION '%', message; END $$`,
  `CREATE TABLE IF NOT EXISTS orq_meta (
     singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
     format_version integer NOT NULL,
     shards integer NOT NULL,
     cluster_id text NOT NULL,
     keys_reserved_below bigint NOT NULL,
     boots bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS orq_items (
     shard integer NOT NULL,
     key bigint NOT NULL,
     value bytea NOT NULL,
     PRIMARY KEY (shard, key)) WITH (fillfactor = 80)`,
  `CREATE TABLE IF NOT EXISTS orq_outcomes (
     id text PRIMARY KEY,
     shard integer NOT NULL,
     value bytea NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS orq_shards (
     shard integer PRIMARY KEY,
     owner text,
     epoch bigint NOT NULL DEFAULT 0,
     lease_until timestamptz)`,
  `CREATE TABLE IF NOT EXISTS orq_nodes (
     node_id text PRIMARY KEY,
     addr text NOT NULL,
     incarnation bigint NOT NULL,
     heartbeat_at timestamptz NOT NULL,
     lease_ms integer NOT NULL)`,
];

/** Thrown when the database was made with another shard count than the one asked for explicitly (the CLI exits 2). */
export class ShardCountMismatchError extends StoreOpenError {
  override name = "ShardCountMismatchError";
}

export interface SchemaOpenOptions {
  /** Shards to create the schema with; null = read them (a new database gets `shardsDefault`). */
  shards: number | null;
  shardsDefault: number;
}

/** Create the schema if the database has none, and return the stored meta row (before this open's boot). */
export async function ensureSchema(client: SqlClient, options: SchemaOpenOptions): Promise<Omit<MetaRecord, "boots">> {
  return await client.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [schemaLockKey]);
    for (const statement of createStatements) await tx.query(statement);
    const existing = await readMeta(tx);
    if (existing !== null) {
      if (existing.formatVersion !== FORMAT_VERSION) {
        throw new StoreOpenError(`the database has orq layout version ${existing.formatVersion}; this build reads version ${FORMAT_VERSION}`);
      }
      if (options.shards !== null && options.shards !== existing.shards) {
        throw new ShardCountMismatchError(
          `the database was created with --shards ${existing.shards} but --shards ${options.shards} was given (items are placed by shard; leave --shards out or use ${existing.shards})`,
        );
      }
      return existing;
    }
    const shards = options.shards ?? options.shardsDefault;
    const clusterId = randomBytes(8).toString("hex");
    await tx.query(
      "INSERT INTO orq_meta (format_version, shards, cluster_id, keys_reserved_below, boots) VALUES ($1, $2, $3, 0, 0)",
      [FORMAT_VERSION, shards, clusterId],
    );
    await tx.query("INSERT INTO orq_shards (shard, epoch) SELECT s, 0 FROM generate_series(0, $1::integer - 1) AS s ON CONFLICT DO NOTHING", [shards]);
    return { formatVersion: FORMAT_VERSION, shards, nodeId: clusterId, keysReservedBelow: 0 };
  });
}

async function readMeta(tx: SqlSession): Promise<Omit<MetaRecord, "boots"> | null> {
  const rows = await tx.query("SELECT format_version, shards, cluster_id, keys_reserved_below FROM orq_meta");
  const row = rows[0];
  if (row === undefined) return null;
  return { formatVersion: Number(row[0]), shards: Number(row[1]), nodeId: String(row[2]), keysReservedBelow: int8Value(row[3]) };
}

/**
 * Count this open (cluster-wide: every node's opens share the counter, so a
 * boot number names one process lifetime in the whole cluster) and, when
 * `keyRange` is given, reserve that many item keys for this open alone.
 * One transaction, committed with synchronous_commit on whatever the
 * durability mode, before the store is handed out.
 */
export async function countOpen(
  client: SqlClient,
  keyRange: number | null,
): Promise<{ boots: number; keysFrom: number; keysBelow: number }> {
  return await client.transaction(async (tx) => {
    await tx.query("SET LOCAL synchronous_commit = on");
    const rows = await tx.query(
      `UPDATE orq_meta SET boots = boots + 1, keys_reserved_below = keys_reserved_below + $1::bigint
       RETURNING boots, keys_reserved_below - $1::bigint, keys_reserved_below`,
      [keyRange ?? 0],
    );
    const row = rows[0];
    if (row === undefined) throw new StoreOpenError("the database has no orq_meta row");
    return { boots: int8Value(row[0]), keysFrom: int8Value(row[1]), keysBelow: int8Value(row[2]) };
  });
}
