// Schedules in PostgreSQL (the `schedule` op): one row per (ns, name) in
// orq_schedules, under store.ts's scheduleKey, with the shard the schedule
// belongs to. Unlike pauses and policies they are not shared rows every node
// polls: a schedule fires on its shard's owner alone, so its row is read
// when the shard is adopted and written in the same fenced transaction as
// the shard's items (the tick's item and the schedule's last tick commit
// together, or neither does: docs/decisions/033-schedules.md). Any node
// reads a namespace's rows for the `schedules` op (readScheduleRecords), so
// one node lists the whole cluster's.

import { decodeScheduleRecord, encodeScheduleRecord } from "../record-codec.ts";
import type { ScheduleRecord } from "../record.ts";
import { scheduleKey, type ScheduleWrite } from "../store.ts";
import type { Statement } from "./commit-statements.ts";
import { byteaValue, type SqlClient } from "./sql-client.ts";

export const createScheduleTableSql = `CREATE TABLE IF NOT EXISTS orq_schedules (
     key text PRIMARY KEY,
     shard integer NOT NULL,
     value bytea NOT NULL)`;

/**
 * Up to `limit` schedules of namespace `ns` with names after `after`, by
 * name, as committed. Keys start with the namespace's prefix (store.ts's
 * scheduleKey), so a name's order is its key's; "C" collation compares
 * bytes, so the order is the code points'.
 */
export async function readScheduleRecords(client: SqlClient, ns: string, after: string | null, limit: number): Promise<ScheduleRecord[]> {
  const prefix = scheduleKey(ns, "");
  const rows = await client.query(
    `SELECT value FROM orq_schedules WHERE starts_with(key, $1) AND key COLLATE "C" > $2 COLLATE "C" ORDER BY key COLLATE "C" LIMIT $3`,
    [prefix, prefix + (after ?? ""), limit],
  );
  return rows.map((row) => decodeScheduleRecord(byteaValue(row[0])));
}

/**
 * The shard a stored schedule lives on, or null when none of that name is
 * stored: in cluster mode a schedule whose item names a group lives on the
 * group's shard, not its name's, so `schedule` and `unschedule` look here
 * first (cluster/cluster-engine.ts).
 */
export async function readScheduleShard(client: SqlClient, ns: string, name: string): Promise<number | null> {
  const rows = await client.query("SELECT shard FROM orq_schedules WHERE key = $1", [scheduleKey(ns, name)]);
  const row = rows[0];
  return row === undefined ? null : Number(row[0]);
}

/** The schedules of the shards this process serves, encoded, by shard then key. */
export class ScheduleRows {
  private readonly byShard = new Map<number, Map<string, Uint8Array>>();

  /** A loaded shard's schedules, by key (shard-rows.ts reads them). */
  adopt(shard: number, values: Map<string, Uint8Array>): void {
    this.byShard.set(shard, values);
  }

  drop(shard: number): void {
    this.byShard.delete(shard);
  }

  /** The loaded shards' schedules (or one shard's). */
  *records(only: number | null = null): Iterable<ScheduleRecord> {
    for (const [shard, values] of this.byShard) {
      if (only !== null && shard !== only) continue;
      for (const value of values.values()) yield decodeScheduleRecord(value);
    }
  }

  /**
   * The commit's parts for schedule writes (commit-sql.ts: each a CTE of the
   * one commit statement, written only when the write's shard is in its `ok`
   * set, so a schedule is fenced by its shard as that shard's items are;
   * a row stored under another shard is left alone, so a schedule never
   * changes shard by a write: docs/decisions/033-schedules.md),
   * and what to remember once they committed, given the shards found fenced.
   */
  statements(writes: readonly ScheduleWrite[] | undefined): { statements: Statement[]; shards: number[]; apply(fenced: ReadonlyMap<number, unknown>): void } {
    const encoded = (writes ?? []).map((write) => ({ write, key: scheduleKey(write.ns, write.name), value: write.record === null ? null : encodeScheduleRecord(write.record) }));
    const statements: Statement[] = encoded.map(({ write, key, value }) =>
      value === null
        ? { text: "DELETE FROM orq_schedules WHERE key = $1 AND shard = $2::integer AND $2::integer IN (SELECT shard FROM ok) RETURNING 1", params: [key, write.shard] }
        : {
            text: "INSERT INTO orq_schedules (key, shard, value) SELECT $1, $2::integer, $3::bytea WHERE $2::integer IN (SELECT shard FROM ok) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value WHERE orq_schedules.shard = EXCLUDED.shard RETURNING 1",
            params: [key, write.shard, value],
          },
    );
    const apply = (fenced: ReadonlyMap<number, unknown>): void => {
      for (const { write, key, value } of encoded) {
        if (fenced.has(write.shard)) continue;
        const values = this.byShard.get(write.shard);
        if (values === undefined) continue;
        if (value === null) values.delete(key);
        else values.set(key, value);
      }
    };
    return { statements, shards: encoded.map(({ write }) => write.shard), apply };
  }
}
