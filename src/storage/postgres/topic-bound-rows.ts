// A topic's own bounds shared by every node (cluster mode, docs/CLUSTER.md
// "Topic bounds across nodes"): the rows behind cluster/topic-bound-leases.ts.
//
// - orq_rate_buckets (ns, topic): the topic's `rate` as one token bucket,
//   refilled by the database's clock, drawn from and handed back to exactly
//   as a namespace's quota bucket is (quota-rows.ts's tokenDrawSql); a draw
//   carries the rate the drawing node holds and stores it.
// - orq_topic_slots (ns, topic) -> (max_leased, free) and orq_shard_slots
//   (ns, topic, shard) -> slots: the topic's `max_leased` as slots, held by
//   shards. Always Σ shard slots + free = max_leased. A shard's owner leases
//   an item of the topic on that shard only while the topic's leased items
//   there are fewer than the shard's slots, so Σ leased <= max_leased over
//   the cluster. Slots move between `free` and a shard (moveSlots) only in a
//   transaction that first share-locks the shard's ownership row and finds
//   it still held by the mover at the epoch it claimed (shard-fence.ts): a
//   node that lost the shard can change none of its slot rows, and the new
//   owner, whose claim waited for that lock, reads them as they are and
//   inherits them with the shard's leased items.
// - A policy commit keeps max_leased in step (policySlotStatements, in the
//   same transaction as the policy row): free moves by the change, and may
//   go negative when max_leased drops below the slots held; then nothing is
//   granted until slots come back. A policy without max_leased (or none)
//   stores max_leased 0: no bound, and slots still held flow back to free.
//
// Lock order, the same everywhere: shard rows (FOR SHARE), then a topic's
// row, then its shard rows; a commit's policy writes update topic rows in
// (ns, topic) order. A draw touches one topic and one shard, so no two
// transactions wait on each other in a cycle.

import type { PolicyRecord } from "../record.ts";
import { policyKey } from "../store.ts";
import type { Statement } from "./commit-statements.ts";
import { drawTokenRow, type QuotaGrant, tokenDrawSql } from "./quota-rows.ts";
import type { RowWrite } from "./shared-rows.ts";
import type { SqlClient, SqlSession } from "./sql-client.ts";

export const createTopicBoundTablesSql = [
  `CREATE TABLE IF NOT EXISTS orq_rate_buckets (
     ns text NOT NULL,
     topic text NOT NULL,
     count integer NOT NULL,
     per_ms bigint NOT NULL,
     tokens double precision NOT NULL,
     refilled_at timestamptz NOT NULL,
     granted integer NOT NULL DEFAULT 0,
     PRIMARY KEY (ns, topic))`,
  `CREATE TABLE IF NOT EXISTS orq_topic_slots (
     ns text NOT NULL,
     topic text NOT NULL,
     max_leased integer NOT NULL,
     free integer NOT NULL,
     PRIMARY KEY (ns, topic))`,
  `CREATE TABLE IF NOT EXISTS orq_shard_slots (
     ns text NOT NULL,
     topic text NOT NULL,
     shard integer NOT NULL,
     slots integer NOT NULL CHECK (slots >= 0),
     PRIMARY KEY (ns, topic, shard))`,
];

/** One draw from a topic's rate bucket: `want` tokens (negative: hand back), for a rate of `count` per `perMs`. */
export interface RateDraw {
  ns: string;
  topic: string;
  count: number;
  perMs: number;
  want: number;
}

const rateDrawSql = tokenDrawSql({ table: "orq_rate_buckets", keys: ["ns", "topic"], setRate: "count = $3, per_ms = $5", perSecond: "b.count * 1000.0 / b.per_ms" });

/** A topic's first draw anywhere: its bucket starts full (`count` tokens, the burst the contract allows). */
const rateCreateSql = "INSERT INTO orq_rate_buckets (ns, topic, count, per_ms, tokens, refilled_at) VALUES ($1, $2, $3, $4, $3, now()) ON CONFLICT (ns, topic) DO NOTHING";

/** Draw (or return) rate tokens in one statement; creates the topic's bucket first when it has none. */
export async function drawRateTokens(client: SqlSession, draw: RateDraw): Promise<QuotaGrant> {
  return await drawTokenRow(
    client,
    { sql: rateDrawSql, params: [draw.ns, draw.topic, draw.count, draw.want, draw.perMs] },
    { sql: rateCreateSql, params: [draw.ns, draw.topic, draw.count, draw.perMs] },
    `topic ${JSON.stringify(draw.topic)} of namespace ${JSON.stringify(draw.ns)}`,
  );
}

/** One move of slots between a topic's free slots and one shard's. */
export interface SlotMove {
  ns: string;
  topic: string;
  shard: number;
  /** The mover's node id and the epoch it holds the shard at: the fence. */
  nodeId: string;
  epoch: number;
  /** Slots asked (> 0), handed back (< 0: at most what the shard holds), or 0 to read what the shard holds. */
  want: number;
  /** The max_leased the mover's policy says, for a topic whose row does not exist yet (a policy stored before this build). */
  maxLeased: number;
}

/** A move's answer: slots granted (the negative `want` of a return), the shard's slots after it, the topic's free slots after it; or fenced. */
export type SlotMoveResult = { fenced: false; granted: number; slots: number; free: number } | { fenced: true; detail: string };

const fenceSql = "SELECT owner, epoch FROM orq_shards WHERE shard = $1 FOR SHARE";

/** Take up to $3 of the free slots (none while free <= 0); the row is locked by the subselect before it is read. */
const takeFreeSql = `UPDATE orq_topic_slots AS t SET free = t.free - g.n
  FROM (SELECT LEAST($3::integer, GREATEST(free, 0)) AS n FROM orq_topic_slots WHERE ns = $1 AND topic = $2 FOR UPDATE) AS g
  WHERE t.ns = $1 AND t.topic = $2
  RETURNING g.n, t.free`;

const giveBackSql = "UPDATE orq_topic_slots SET free = free + $3 WHERE ns = $1 AND topic = $2 RETURNING free";

const createTopicSql = "INSERT INTO orq_topic_slots (ns, topic, max_leased, free) VALUES ($1, $2, $3, $3) ON CONFLICT (ns, topic) DO NOTHING";

const addShardSlotsSql = `INSERT INTO orq_shard_slots (ns, topic, shard, slots) VALUES ($1, $2, $3, $4)
  ON CONFLICT (ns, topic, shard) DO UPDATE SET slots = orq_shard_slots.slots + EXCLUDED.slots
  RETURNING slots`;

/** A hand-back (an UPDATE: an INSERT's proposed row of negative slots would fail the CHECK before meeting the row). */
const takeShardSlotsSql = "UPDATE orq_shard_slots SET slots = slots + $4 WHERE ns = $1 AND topic = $2 AND shard = $3 RETURNING slots";

/**
 * Move slots between the topic's free ones and a shard's, in one
 * transaction fenced by the shard's ownership. A return of more than the
 * shard holds fails (the CHECK): the caller returns only what it holds.
 */
export async function moveSlots(client: SqlClient, move: SlotMove): Promise<SlotMoveResult> {
  return await client.transaction(async (tx): Promise<SlotMoveResult> => {
    const shardRow = (await tx.query(fenceSql, [move.shard]))[0];
    const owner = shardRow === undefined || shardRow[0] === null ? null : String(shardRow[0]);
    const epoch = shardRow === undefined ? null : Number(shardRow[1]);
    if (owner !== move.nodeId || epoch !== move.epoch) {
      return { fenced: true, detail: `shard ${move.shard} is now ${owner ?? "unowned"} at epoch ${String(epoch)}, held at epoch ${move.epoch}` };
    }
    let granted: number;
    let free: number;
    if (move.want > 0) {
      let row = (await tx.query(takeFreeSql, [move.ns, move.topic, move.want]))[0];
      if (row === undefined) {
        await tx.query(createTopicSql, [move.ns, move.topic, move.maxLeased]);
        row = (await tx.query(takeFreeSql, [move.ns, move.topic, move.want]))[0];
      }
      if (row === undefined) throw new Error(`no slot row for topic ${JSON.stringify(move.topic)} of namespace ${JSON.stringify(move.ns)}`);
      granted = Number(row[0]);
      free = Number(row[1]);
    } else {
      const row = (await tx.query(giveBackSql, [move.ns, move.topic, -move.want]))[0];
      // No topic row: slots are only ever drawn from one, so no shard holds any to give back.
      if (row === undefined) throw new Error(`no slot row for topic ${JSON.stringify(move.topic)} of namespace ${JSON.stringify(move.ns)}`);
      granted = move.want;
      free = Number(row[0]);
    }
    const shardRows = await tx.query(granted >= 0 ? addShardSlotsSql : takeShardSlotsSql, [move.ns, move.topic, move.shard, granted]);
    const slots = shardRows[0];
    if (slots === undefined) throw new Error(`shard ${move.shard} holds no slots of topic ${JSON.stringify(move.topic)} to give back`);
    return { fenced: false, granted, slots: Number(slots[0]), free };
  });
}

/** Every topic's slots a shard holds (read by its new owner once its claim went through: none can change them but it). */
export async function shardSlots(client: SqlSession, shard: number): Promise<Array<{ ns: string; topic: string; slots: number }>> {
  const rows = await client.query("SELECT ns, topic, slots FROM orq_shard_slots WHERE shard = $1 AND slots > 0", [shard]);
  return rows.map((row) => ({ ns: String(row[0]), topic: String(row[1]), slots: Number(row[2]) }));
}

/** A topic's slot row: its max_leased and free slots, or null when it has none (tests, stats). */
export async function topicSlots(client: SqlSession, ns: string, topic: string): Promise<{ maxLeased: number; free: number } | null> {
  const row = (await client.query("SELECT max_leased, free FROM orq_topic_slots WHERE ns = $1 AND topic = $2", [ns, topic]))[0];
  return row === undefined ? null : { maxLeased: Number(row[0]), free: Number(row[1]) };
}

/** A topic's max_leased set: free moves by the change (a new row starts with every slot free). */
const setMaxLeasedSql = `INSERT INTO orq_topic_slots (ns, topic, max_leased, free) VALUES ($1, $2, $3, $3)
  ON CONFLICT (ns, topic) DO UPDATE SET free = orq_topic_slots.free + (EXCLUDED.max_leased - orq_topic_slots.max_leased), max_leased = EXCLUDED.max_leased`;

/** A policy without max_leased: no bound (0), the slots held elsewhere counted below free until they come back. */
const unboundSql = "UPDATE orq_topic_slots SET free = free - max_leased, max_leased = 0 WHERE ns = $1 AND topic = $2";

/** A clear of the topic's own policy, when its delete took the row (the delete is conditional: shared-rows.ts). */
const clearedSql = `UPDATE orq_topic_slots SET free = free - max_leased, max_leased = 0
  WHERE ns = $1 AND topic = $2 AND NOT EXISTS (SELECT 1 FROM orq_policies WHERE key = $3)`;

/**
 * The statements that keep the slot rows' max_leased in step with a commit's
 * policy writes of topics' own policies; they run after the policy rows'
 * statements, in the same transaction, in (ns, topic) order.
 */
export function policySlotStatements(writes: ReadonlyArray<RowWrite<PolicyRecord>> | undefined): Statement[] {
  const own = (writes ?? []).filter((write) => write.group === null);
  if (own.length === 0) return [];
  own.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  return own.map(({ ns, topic, record }) => {
    if (record === null) return { text: clearedSql, params: [ns, topic, policyKey(ns, topic, null)] };
    if (record.maxLeased === null) return { text: unboundSql, params: [ns, topic] };
    return { text: setMaxLeasedSql, params: [ns, topic, record.maxLeased] };
  });
}
