// How items on other nodes' shards ended, read from the database (cluster
// mode's `after` dependencies across nodes, src/engine/ops/remote-dependencies.ts):
// an outcome row says acked, cancelled or expired; an item row in state dead
// says dead; any other item row is still live; no row at all means the item
// ended longer ago than outcome retention, which counts as satisfied (acked),
// as a restart counts an unknown dependency.

import { assert } from "../../lib/assert.ts";
import { parseId } from "../../lib/id-grammar.ts";
import { decodeItemRecord, decodeOutcomeRecord, recordReaders } from "../record-codec.ts";
import { byteaValue, int8Value, type SqlSession } from "./sql-client.ts";

export type RemoteItemEnd = "acked" | "cancelled" | "expired" | "dead";

/** For each id that has ended, how; live ids are left out. Ids are canonical `<shard>:<key>`. */
export async function remoteEnds(sql: SqlSession, ids: readonly string[]): Promise<Map<string, RemoteItemEnd>> {
  const ends = new Map<string, RemoteItemEnd>();
  if (ids.length === 0) return ends;
  const shards: number[] = [];
  const keys: number[] = [];
  for (const id of ids) {
    const parts = parseId(id);
    assert(parts !== null, `remote dependency ${id} is not an id`);
    shards.push(parts.shard);
    keys.push(parts.key);
  }
  const [outcomes, items] = await sql.pipeline([
    { text: "SELECT id, value FROM orq_outcomes WHERE id = ANY($1::text[])", params: [ids] },
    {
      text: "SELECT i.shard, i.key, i.value FROM orq_items AS i JOIN unnest($1::integer[], $2::bigint[]) AS w(shard, key) ON i.shard = w.shard AND i.key = w.key",
      params: [shards, keys],
    },
  ]);
  const live = new Set<string>();
  for (const row of items ?? []) {
    const id = `${Number(row[0])}:${int8Value(row[1])}`;
    const record = decodeItemRecord(byteaValue(row[2]), recordReaders, false);
    if (record.state === "dead") ends.set(id, "dead");
    else live.add(id);
  }
  for (const row of outcomes ?? []) ends.set(String(row[0]), decodeOutcomeRecord(byteaValue(row[1])).outcome);
  for (const id of ids) if (!ends.has(id) && !live.has(id)) ends.set(id, "acked");
  return ends;
}
