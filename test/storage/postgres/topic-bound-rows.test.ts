// Goal: the rows of topics' own bounds in a real PostgreSQL, as
// topic-bound-rows.ts says. Rate: the first draw makes a full bucket of
// `count`; draws from many sessions at once never take more than it plus
// the refill by the database's clock; a draw with a new rate stores it and
// caps the bucket. Slots: a policy commit makes the topic's row (every slot
// free) and moves free by every change of max_leased (negative when it drops
// below the slots held; a clear or a policy without max_leased counts as 0;
// a clear that lost to a newer policy changes nothing); moves from many
// sessions for many shards keep Σ shard slots + free = max_leased and never
// grant beyond free; a move by a node that does not hold the shard at its
// epoch is fenced and changes nothing; a claim of the shard waits for a
// move that holds its row and the new owner reads the slots it left; a
// topic stored before its row existed gets one at the first draw.
// Skipped when PostgreSQL is not installed (unless ORQ_REQUIRE_POSTGRES=1).

import { afterEach, describe, expect, test } from "bun:test";
import type { PostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import { connectSql, type SqlClient } from "../../../src/storage/postgres/sql-client.ts";
import { drawRateTokens, moveSlots, shardSlots, topicSlots } from "../../../src/storage/postgres/topic-bound-rows.ts";
import type { PolicyRecord } from "../../../src/storage/record.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

const ns = "default";
const shards = 4;

async function setPolicy(store: PostgresStore, topic: string, bounds: Partial<PolicyRecord> | null): Promise<void> {
  const record = bounds === null ? null : { ns, topic, group: null, weight: null, maxLeased: null, rate: null, ...bounds };
  const result = await store.commit({ shards: [], outcomes: [], meta: null, policies: [{ ns, topic, group: null, record }] });
  expect(result.metaError).toBeNull();
}

function move(topic: string, shard: number, want: number, extra: { nodeId?: string; epoch?: number; maxLeased?: number } = {}) {
  return { ns, topic, shard, nodeId: extra.nodeId ?? "n1", epoch: extra.epoch ?? 1, want, maxLeased: extra.maxLeased ?? 0 };
}

async function slotSum(client: SqlClient, topic: string): Promise<number> {
  const rows = await client.query("SELECT COALESCE(SUM(slots), 0)::integer FROM orq_shard_slots WHERE ns = $1 AND topic = $2", [ns, topic]);
  return Number(rows[0]![0]);
}

async function dbSeconds(client: SqlClient, since: string): Promise<number> {
  return Number((await client.query("SELECT EXTRACT(EPOCH FROM now() - $1::timestamptz)::float8", [since]))[0]![0]);
}

describe.skipIf(!postgresAvailable())("topic bound rows in PostgreSQL", () => {
  const session = storeSession();
  // Clients of their own (several sessions, a 10 s connect timeout; session.admin's have one session), closed after each test.
  const clients: SqlClient[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  /** A new database with orq's schema (4 shards, each owned by "n1" at epoch 1), its store, and a client of `connections` sessions. */
  async function database(label: string, connections: number): Promise<{ store: PostgresStore; client: SqlClient; url: string }> {
    const url = await session.server().createDatabase(label);
    const store = await openStore(url);
    const client = connectSql({ url, maxConnections: connections, connectTimeoutS: 10, settings: {}, applicationName: "orq-test topic bounds" });
    clients.push(client);
    await client.query("UPDATE orq_shards SET owner = 'n1', epoch = 1, lease_until = now() + interval '1 hour'");
    return { store, client, url };
  }

  function openStore(url: string): Promise<PostgresStore> {
    return session.open(storeOptions(url, { shards, shardsDefault: shards }));
  }

  test("a topic's rate bucket: starts full, concurrent draws never exceed it plus the refill, a new rate caps it", async () => {
    const { client } = await database("rate-rows", 8);
    const startedAt = String((await client.query("SELECT now()::text"))[0]![0]);
    expect(await drawRateTokens(client, { ns, topic: "t", count: 50, perMs: 10_000, want: 5 })).toEqual({ granted: 5, left: 45 });
    const grants = await Promise.all(Array.from({ length: 30 }, () => drawRateTokens(client, { ns, topic: "t", count: 50, perMs: 10_000, want: 4 })));
    const total = 5 + grants.reduce((sum, grant) => sum + grant.granted, 0);
    const elapsedS = await dbSeconds(client, startedAt);
    expect(total).toBeGreaterThanOrEqual(50);
    expect(total).toBeLessThanOrEqual(50 + elapsedS * 5);
    // Handed back beyond the bucket: capped. A smaller rate caps it; another topic has its own bucket.
    expect((await drawRateTokens(client, { ns, topic: "t", count: 50, perMs: 10_000, want: -100 })).left).toBe(50);
    expect(await drawRateTokens(client, { ns, topic: "t", count: 10, perMs: 1_000, want: 0 })).toEqual({ granted: 0, left: 10 });
    expect(await drawRateTokens(client, { ns, topic: "u", count: 3, perMs: 1_000, want: 2 })).toEqual({ granted: 2, left: 1 });
    const row = (await client.query("SELECT count, per_ms FROM orq_rate_buckets WHERE ns = $1 AND topic = 't'", [ns]))[0]!;
    expect([Number(row[0]), Number(row[1])]).toEqual([10, 1_000]);
  });

  test("policy commits keep max_leased and free in step; moves keep slots + free = max_leased and grant nothing beyond free", async () => {
    const { store, client } = await database("slot-rows", 8);
    await setPolicy(store, "t", { maxLeased: 10 });
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 10, free: 10 });
    // 40 draws of 1..3 from 8 sessions over the 4 shards at once: exactly the 10 slots go out.
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => moveSlots(client, move("t", i % shards, 1 + (i % 3)))));
    const granted = results.reduce((sum, r) => sum + (r.fenced ? 0 : r.granted), 0);
    expect(results.every((r) => !r.fenced)).toBe(true);
    expect(granted).toBe(10);
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 10, free: 0 });
    expect(await slotSum(client, "t")).toBe(10);
    // A hand-back, then max_leased lowered below what the shards hold: free goes negative and nothing is granted.
    const onShard0 = (await shardSlots(client, 0)).find((row) => row.topic === "t")?.slots ?? 0;
    expect(onShard0).toBeGreaterThan(0);
    expect(await moveSlots(client, move("t", 0, -1))).toEqual({ fenced: false, granted: -1, slots: onShard0 - 1, free: 1 });
    await setPolicy(store, "t", { maxLeased: 4 });
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 4, free: -5 });
    expect(await moveSlots(client, move("t", 1, 2))).toMatchObject({ fenced: false, granted: 0, free: -5 });
    expect((await slotSum(client, "t")) + (await topicSlots(client, ns, "t"))!.free).toBe(4);
    // A policy with a rate only: no bound (0); a hand-back of everything brings free to 0.
    await setPolicy(store, "t", { rate: { count: 5, perMs: 1_000 } });
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 0, free: -9 });
    for (let shard = 0; shard < shards; shard++) {
      const held = (await shardSlots(client, shard)).find((row) => row.topic === "t")?.slots ?? 0;
      if (held > 0) await moveSlots(client, move("t", shard, -held));
    }
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 0, free: 0 });
    // Set again, then cleared: back to no bound with every slot free.
    await setPolicy(store, "t", { maxLeased: 3 });
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 3, free: 3 });
    await setPolicy(store, "t", null);
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 0, free: 0 });
  });

  test("a clear that lost to a newer policy changes no slots; a topic without a row gets one at its first draw", async () => {
    const { store, client, url } = await database("slot-clear", 2);
    await setPolicy(store, "t", { maxLeased: 6 });
    // Another node (store) replaces the policy; this store's clear is conditional on the row it saw, and finds it changed.
    const other = await openStore(url);
    await setPolicy(other, "t", { maxLeased: 8 });
    await setPolicy(store, "t", null);
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 8, free: 8 });
    // A policy stored before this build made rows: the first draw makes the row from the drawing node's max_leased.
    expect(await topicSlots(client, ns, "old")).toBeNull();
    expect(await moveSlots(client, move("old", 2, 3, { maxLeased: 5 }))).toEqual({ fenced: false, granted: 3, slots: 3, free: 2 });
    expect(await topicSlots(client, ns, "old")).toEqual({ maxLeased: 5, free: 2 });
  });

  test("moves are fenced by the shard's ownership; a claim waits for a move holding the shard's row, and the new owner reads what it left", async () => {
    const { store, client, url } = await database("slot-fence", 4);
    await setPolicy(store, "t", { maxLeased: 5 });
    expect(await moveSlots(client, move("t", 1, 2))).toMatchObject({ fenced: false, granted: 2, slots: 2 });
    // Another node, or this node at an older epoch: fenced, nothing changed.
    expect(await moveSlots(client, move("t", 1, 2, { nodeId: "n2" }))).toMatchObject({ fenced: true });
    expect(await moveSlots(client, move("t", 1, -2, { epoch: 0 }))).toMatchObject({ fenced: true });
    expect(await topicSlots(client, ns, "t")).toEqual({ maxLeased: 5, free: 3 });
    // A move's transaction holds the shard row FOR SHARE: a claim (epoch raised) waits for it, then the old owner is fenced.
    const holder = connectSql({ url, maxConnections: 1, connectTimeoutS: 10, settings: {}, applicationName: "orq-test holder" });
    clients.push(holder);
    let claimed = false;
    const holding = holder.transaction(async (session) => {
      await session.query("SELECT 1 FROM orq_shards WHERE shard = 1 FOR SHARE");
      const claim = client.query("UPDATE orq_shards SET owner = 'n2', epoch = epoch + 1 WHERE shard = 1 RETURNING epoch").then((rows) => {
        claimed = true;
        return rows;
      });
      // The claim waits on the row lock (seen in pg_locks), not for any time.
      for (;;) {
        const waiting = await client.query("SELECT count(*)::integer FROM pg_locks WHERE NOT granted AND locktype IN ('tuple', 'transactionid')");
        if (Number(waiting[0]![0]) > 0) break;
        await Promise.resolve();
      }
      expect(claimed).toBe(false);
      return { claim };
    });
    const rows = await (await holding).claim;
    expect(claimed).toBe(true);
    expect(Number(rows[0]![0])).toBe(2);
    expect(await moveSlots(client, move("t", 1, 1))).toMatchObject({ fenced: true });
    expect(await shardSlots(client, 1)).toEqual([{ ns, topic: "t", slots: 2 }]);
    expect(await moveSlots(client, move("t", 1, 1, { nodeId: "n2", epoch: 2 }))).toMatchObject({ fenced: false, granted: 1, slots: 3 });
  });
});
