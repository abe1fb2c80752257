// Goal: shard ownership in a real PostgreSQL keeps each shard with one node and
// fences the rest: racing nodes claim disjoint shards and share them evenly
// (ceil(shards / live nodes), also after a join), a node whose lease ran out
// in the database loses the shard to a claimer and its later commit to that
// shard is refused in the commit's own transaction, a claim passes over a
// shard whose row a commit in flight holds (and takes it afterwards), a node
// stops serving on its own once its last renewal is older than the lease (injected clock), SIGTERM-style handover frees every
// shard at once, a node names the shards whose owner stopped renewing that it
// would claim, each survivor starting from its own slice (silentShards, read
// ahead by cluster nodes), a claim takes the preferred (read-ahead) shards
// first, and a live node id cannot be registered twice.
// "Time passing" in the database is simulated by ageing rows (lease_until,
// heartbeat_at), never by sleeping.

import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../../src/lib/clock.ts";
import { clusterLimits } from "../../../src/limits.ts";
import { openPostgresStore } from "../../../src/storage/postgres/postgres-store.ts";
import { ShardFencedError } from "../../../src/storage/postgres/shard-fence.ts";
import { NodeIdInUseError, ShardOwnership } from "../../../src/storage/postgres/shard-ownership.ts";
import { connectSql, type SqlClient, type SqlSession } from "../../../src/storage/postgres/sql-client.ts";
import { postgresAvailable } from "../../support/postgres-server.ts";
import { itemRecord, shardBatch } from "../record-fixtures.ts";
import { storeOptions } from "./store-options.ts";
import { storeSession } from "./store-session.ts";

/** Long enough that no lease runs out in the database by itself during a test. */
const leaseMs = 60_000;

interface Node {
  id: string;
  ownership: ShardOwnership;
  clock: ManualClock;
  adopted: number[];
  dropped: Array<{ shard: number; reason: string }>;
  /** Set to make every database call of this node fail (cut off from the database). */
  cut: { on: boolean };
}

describe.skipIf(!postgresAvailable())("shard ownership on PostgreSQL", () => {
  const session = storeSession();
  // The nodes' clients have two sessions each (session.admin's have one): closed after each test.
  const closers: Array<{ close(): Promise<void> }> = [];

  afterEach(async () => {
    for (const each of closers.splice(0)) await each.close();
  });

  function client(url: string): SqlClient {
    const sql = connectSql({ url, maxConnections: 2, connectTimeoutS: 5, settings: {}, applicationName: "orq-test" });
    closers.push(sql);
    return sql;
  }

  /** A client that fails every call while cut.on: a node cut off from the database. */
  function cuttable(inner: SqlClient, cut: { on: boolean }): SqlClient {
    const check = (): void => {
      if (cut.on) throw new Error("connection refused (cut off)");
    };
    const wrap = (session: SqlSession): SqlSession => ({
      query: async (text, params) => (check(), await session.query(text, params)),
      pipeline: async (statements) => (check(), await session.pipeline(statements)),
    });
    return { ...wrap(inner), transaction: async (work) => (check(), await inner.transaction(async (tx) => await work(wrap(tx)))), close: () => inner.close() };
  }

  async function database(shards: number): Promise<string> {
    const url = await session.server().createDatabase("ownership");
    const store = await openPostgresStore(storeOptions(url, { shards, shardsDefault: shards }));
    await store.close();
    return url;
  }

  async function node(url: string, id: string, shards: number, incarnation = 1, preferred: number[] = []): Promise<Node> {
    const clock = new ManualClock();
    const cut = { on: false };
    const adopted: number[] = [];
    const dropped: Array<{ shard: number; reason: string }> = [];
    const ownership = new ShardOwnership({
      client: cuttable(client(url), cut),
      nodeId: id,
      addr: `127.0.0.1:${id.length}`,
      incarnation,
      shardCount: shards,
      leaseMs,
      clock,
      onAdopt: async (shard) => void adopted.push(shard),
      onDrop: (shard, reason) => void dropped.push({ shard, reason }),
      preferredClaims: () => preferred,
    });
    await ownership.register(async () => {
      throw new Error("register should not wait here");
    });
    return { id, ownership, clock, adopted, dropped, cut };
  }

  async function tickAll(nodes: Node[], rounds = 3): Promise<void> {
    for (let round = 0; round < rounds; round++) await Promise.all(nodes.map((n) => n.ownership.tick()));
  }

  /** Nodes "a" and "b" on a database of 4 shards, ticked until they hold two each. */
  async function twoNodesOnFourShards(): Promise<{ url: string; a: Node; b: Node; aShards: number[] }> {
    const url = await database(4);
    const a = await node(url, "a", 4);
    const b = await node(url, "b", 4);
    await tickAll([a, b]);
    const aShards = a.ownership.servedShards();
    expect(aShards.length).toBe(2);
    return { url, a, b, aShards };
  }

  function expectPartition(nodes: Node[], shards: number): void {
    const owners = new Map<number, string>();
    for (const n of nodes) {
      for (const shard of n.ownership.servedShards()) {
        expect(owners.has(shard)).toBe(false);
        owners.set(shard, n.id);
      }
      expect(n.ownership.servedShards().length).toBeLessThanOrEqual(Math.ceil(shards / nodes.length));
    }
    expect([...owners.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: shards }, (_, i) => i));
  }

  async function age(url: string, sql: string, params: unknown[]): Promise<void> {
    await client(url).query(sql, params);
  }

  test("two nodes racing for 8 shards each get 4 different ones, loaded before served; the maps agree", async () => {
    const url = await database(8);
    const a = await node(url, "a", 8);
    const b = await node(url, "b", 8);
    await tickAll([a, b]);
    expectPartition([a, b], 8);
    expect(a.ownership.servedShards().length).toBe(4);
    expect(a.adopted.sort()).toEqual(a.ownership.servedShards());
    expect(b.adopted.sort()).toEqual(b.ownership.servedShards());
    const map = a.ownership.map();
    expect(map.nodes.map((n) => n.nodeId)).toEqual(["a", "b"]);
    for (const shard of a.ownership.servedShards()) expect(map.owners[shard]).toBe("a");
    expect(b.ownership.map().owners).toEqual(map.owners);
    expect(map.mapVersion).toBe(8);
  });

  test("three nodes share 16 shards at most 6 each; a fourth joins and they rebalance to 4 each", async () => {
    const url = await database(16);
    const nodes = [await node(url, "n1", 16), await node(url, "n2", 16), await node(url, "n3", 16)];
    await tickAll(nodes);
    expectPartition(nodes, 16);
    const versionBefore = nodes[0]!.ownership.map().mapVersion;
    nodes.push(await node(url, "n4", 16));
    await tickAll(nodes, 4);
    expectPartition(nodes, 16);
    for (const n of nodes) expect(n.ownership.servedShards().length).toBe(4);
    expect(nodes[3]!.ownership.map().mapVersion).toBeGreaterThan(versionBefore);
    // Whoever gave shards up dropped them as handed over.
    expect(nodes.slice(0, 3).flatMap((n) => n.dropped.map((d) => d.reason))).toContain("handed over");
  });

  test("a node whose lease ran out loses the shard to a claimer; its later commit to it is refused, its other shard commits", async () => {
    const url = await database(4);
    const a = await node(url, "a", 4);
    await a.ownership.tick();
    expect(a.ownership.servedShards()).toEqual([0, 1, 2, 3]);
    const store = await session.open(storeOptions(url, { shardsDefault: 4, loadAllShards: true }));
    store.fence = a.ownership;
    // a is paused past its lease on shard 0 (as the database sees it), and b joins and claims it.
    await age(url, "UPDATE orq_shards SET lease_until = now() - interval '1 second' WHERE shard = 0", []);
    const b = await node(url, "b", 4);
    await b.ownership.tick();
    expect(b.ownership.servedShards()).toEqual([0]);
    // a resumes and commits to shards 0 and 1 in one batch.
    const result = await store.commit({
      shards: [
        shardBatch(0, [{ key: 7, record: itemRecord() }]),
        shardBatch(1, [{ key: 8, record: itemRecord() }]),
      ],
      outcomes: [{ id: "0:3", record: { ns: "n", outcome: "acked", endedAtMs: 1 } }],
      meta: null,
    });
    expect(result.failedShards.get(0)).toBeInstanceOf(ShardFencedError);
    expect(result.failedShards.get(0)?.message).toContain("now b at epoch 2");
    expect(result.failedShards.has(1)).toBe(false);
    const rows = await client(url).query("SELECT shard, key FROM orq_items ORDER BY shard");
    expect(rows.map((row) => [Number(row[0]), Number(row[1])])).toEqual([[1, 8]]);
    expect((await client(url).query("SELECT count(*) FROM orq_outcomes"))[0]?.[0]).toBe("0");
    // a stopped serving shard 0 the moment its commit found it lost.
    expect(a.ownership.servedShards()).toEqual([1, 2, 3]);
    expect(a.dropped).toEqual([{ shard: 0, reason: expect.stringContaining("another node claimed it") }]);
    // A second commit to shard 0 is refused before it reaches the database.
    const again = await store.commit({ shards: [shardBatch(0, [{ key: 9, record: itemRecord() }])], outcomes: [], meta: null, acked: null, ackedPurgeBeforeMs: null });
    expect(again.failedShards.get(0)?.message).toContain("not held");
  });

  test("a claim passes over a shard whose row a commit in flight holds, and takes it once that commit ended", async () => {
    const url = await database(2);
    const a = await node(url, "a", 2);
    await a.ownership.tick();
    await age(url, "UPDATE orq_shards SET lease_until = now() - interval '1 second' WHERE shard = 0", []);
    const b = await node(url, "b", 2);
    let release = (): void => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked = (): void => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // a's commit in flight: the fence check's share lock, held until released.
    const inFlight = client(url).transaction(async (tx) => {
      await tx.query("SELECT epoch FROM orq_shards WHERE shard = 0 FOR SHARE");
      locked();
      await released;
      await tx.query("INSERT INTO orq_items (shard, key, value) VALUES (0, 1, '\\x00')");
    });
    await isLocked;
    // The claim neither waits (its tick would stall its own renewals) nor takes the row.
    await b.ownership.tick();
    expect(b.ownership.servedShards()).toEqual([]);
    release();
    await inFlight;
    await b.ownership.tick();
    expect(b.ownership.servedShards()).toEqual([0]);
    const watcher = client(url);
    expect((await watcher.query("SELECT owner, epoch FROM orq_shards WHERE shard = 0"))[0]).toEqual(["b", "2"]);
    // The commit ordered before the claim is there for the new owner to load.
    expect((await watcher.query("SELECT count(*) FROM orq_items WHERE shard = 0"))[0]?.[0]).toBe("1");
  });

  test("a node stops serving on its own once its last good renewal is older than the lease, even cut off from the database", async () => {
    const url = await database(2);
    const a = await node(url, "a", 2);
    await a.ownership.tick();
    expect(a.ownership.servedShards()).toEqual([0, 1]);
    a.cut.on = true;
    a.clock.advance(leaseMs - 1);
    await a.ownership.tick();
    expect(a.ownership.lastError?.message).toContain("cut off");
    expect(a.ownership.servedShards()).toEqual([0, 1]);
    a.clock.advance(1);
    expect(a.ownership.servedShards()).toEqual([]);
    expect(a.ownership.heldEpoch(0)).toBeNull();
    expect(a.dropped.map((d) => d.reason)).toEqual(["its lease ran out without a renewal", "its lease ran out without a renewal"]);
    // Back in touch, it claims them again (their leases ran out in the database too) at a new epoch.
    a.cut.on = false;
    await age(url, "UPDATE orq_shards SET lease_until = now() - interval '1 second'", []);
    await a.ownership.tick();
    expect(a.ownership.servedShards()).toEqual([0, 1]);
    expect(a.ownership.heldEpoch(0)).toBe(2);
  });

  test("cut off past its lease, a node's map no longer names it the owner of its shards (a client then looks elsewhere)", async () => {
    const url = await database(2);
    const a = await node(url, "a", 2);
    await a.ownership.tick();
    expect(a.ownership.map().owners).toEqual(["a", "a"]);
    a.cut.on = true;
    a.clock.advance(leaseMs);
    // Nothing asked about the shards meanwhile: the map alone must apply the local expiry.
    expect(a.ownership.map().owners).toEqual([null, null]);
    expect(a.dropped.map((d) => d.shard).sort()).toEqual([0, 1]);
  });

  test("handover gives every shard up and leaves; the other node takes them all on its next tick", async () => {
    const { a, b, aShards } = await twoNodesOnFourShards();
    await a.ownership.handover();
    expect(a.ownership.servedShards()).toEqual([]);
    expect(a.dropped.map((d) => d.shard).sort()).toEqual(aShards);
    await b.ownership.tick();
    expect(b.ownership.servedShards()).toEqual([0, 1, 2, 3]);
    expect(b.ownership.map().nodes.map((n) => n.nodeId)).toEqual(["b"]);
  });

  test("a node ticks as another node's shard lease ends, when that comes before its next regular tick, and claims the shard then", async () => {
    const { url, a, b, aShards } = await twoNodesOnFourShards();
    // Every owner renewing: the regular interval (a third of the 60 s lease, at most 1 s).
    expect(b.ownership.nextTickInMs()).toBe(b.ownership.renewIntervalMs);
    expect(a.ownership.nextTickInMs()).toBe(a.ownership.renewIntervalMs);
    // a stops renewing: as the database sees it, one of its shards has 300 ms of lease left, the other 2 s.
    const [soon, later] = aShards as [number, number];
    await age(url, "UPDATE orq_shards SET lease_until = now() + interval '300 milliseconds' WHERE shard = $1", [soon]);
    await age(url, "UPDATE orq_shards SET lease_until = now() + interval '2 seconds' WHERE shard = $1", [later]);
    await b.ownership.tick();
    // b's clock stands still (ManualClock): the wait is what the database said was left, plus the margin.
    const waitMs = b.ownership.nextTickInMs();
    expect(waitMs).toBeGreaterThan(clusterLimits.expiryTickMarginMs);
    expect(waitMs).toBeLessThanOrEqual(300 + clusterLimits.expiryTickMarginMs);
    expect(waitMs).toBeLessThan(b.ownership.renewIntervalMs);
    // Past that point the wait is the margin, never less; once ticked past, the next wait is read afresh.
    b.clock.advance(400);
    expect(b.ownership.nextTickInMs()).toBe(clusterLimits.expiryTickMarginMs);
    // At the lease's end (aged past it here, with a's heartbeat) the tick claims the shard.
    await age(url, "UPDATE orq_shards SET lease_until = now() - interval '1 millisecond' WHERE shard = $1", [soon]);
    await age(url, "UPDATE orq_nodes SET heartbeat_at = now() - interval '2 minutes' WHERE node_id = 'a'", []);
    await b.ownership.tick();
    expect(b.ownership.servedShards()).toContain(soon);
    expect(b.ownership.servedShards()).not.toContain(later);
    // The other shard's lease ends 2 s on: past the regular interval, so the regular tick it is.
    expect(b.ownership.nextTickInMs()).toBe(b.ownership.renewIntervalMs);
  });
  test("shards whose owner missed two renewals are named silent, as many as this node would claim, until their owner renews", async () => {
    const url = await database(8);
    const [a, b, c] = [await node(url, "a", 8), await node(url, "b", 8), await node(url, "c", 8)];
    await tickAll([a, b, c]);
    const aShards = a.ownership.servedShards();
    expect(aShards.length).toBeGreaterThanOrEqual(2);
    // Every owner renewing (60 s leases, renewed at 1 s): none silent.
    for (const n of [a, b, c]) expect(n.ownership.silentShards()).toEqual([]);
    // One renewal missed by a (as the database sees it): not yet.
    const oneMissedS = (leaseMs - a.ownership.renewIntervalMs * 1.5) / 1000;
    await age(url, "UPDATE orq_shards SET lease_until = now() + make_interval(secs => $2) WHERE shard = ANY($1::integer[])", [aShards, oneMissedS]);
    await b.ownership.tick();
    expect(b.ownership.silentShards()).toEqual([]);
    // Two missed: a's shards are silent to b and c. Each would hold ceil(8 / 2) once a is gone, so it names that many
    // less what it holds; b (rank 0 of the two staying) starts from the even places among them, c from the odd ones.
    const twoMissedS = (leaseMs - a.ownership.renewIntervalMs * 2.5) / 1000;
    await age(url, "UPDATE orq_shards SET lease_until = now() + make_interval(secs => $2) WHERE shard = ANY($1::integer[])", [aShards, twoMissedS]);
    await b.ownership.tick();
    await c.ownership.tick();
    const sorted = [...aShards].sort((x, y) => x - y);
    for (const [n, rank] of [[b, 0], [c, 1]] as const) {
      const want = Math.max(0, Math.ceil(8 / 2) - n.ownership.servedShards().length);
      const order = [...sorted.filter((_, at) => at % 2 === rank), ...sorted.filter((_, at) => at % 2 !== rank)];
      expect(n.ownership.silentShards()).toEqual(order.slice(0, want));
    }
    expect(b.ownership.silentShards()[0]).not.toBe(c.ownership.silentShards()[0]);
    // a renews: silent no more.
    await a.ownership.tick();
    await b.ownership.tick();
    expect(b.ownership.silentShards()).toEqual([]);
    // A tick that cannot reach the database names none.
    await age(url, "UPDATE orq_shards SET lease_until = now() + make_interval(secs => $2) WHERE shard = ANY($1::integer[])", [aShards, twoMissedS]);
    await b.ownership.tick();
    expect(b.ownership.silentShards().length).toBeGreaterThan(0);
    b.cut.on = true;
    await b.ownership.tick();
    expect(b.ownership.silentShards()).toEqual([]);
  });

  test("a claim takes the preferred shards first when it has a choice", async () => {
    // Two live nodes on 6 shards: a node's share is 3. Without preferences the lowest three; preferring 5 and 1, those and the lowest other.
    const plain = await database(6);
    await node(plain, "w", 6); // registered, so live, but never ticks
    const p = await node(plain, "p", 6);
    await p.ownership.tick();
    expect([...p.adopted].sort((x, y) => x - y)).toEqual([0, 1, 2]);
    const preferring = await database(6);
    await node(preferring, "w", 6);
    const q = await node(preferring, "q", 6, 1, [5, 1]);
    await q.ownership.tick();
    expect([...q.adopted].sort((x, y) => x - y)).toEqual([0, 1, 5]);
  });

  test("a live node's id is refused after waiting one lease; a dead one's row is taken over at once", async () => {
    const url = await database(2);
    const live = await node(url, "same", 2);
    const twin = new ShardOwnership({
      client: client(url),
      nodeId: "same",
      addr: "127.0.0.1:2",
      incarnation: 2,
      shardCount: 2,
      leaseMs,
      clock: new ManualClock(),
      onAdopt: async () => {},
      onDrop: () => {},
    });
    const waited: number[] = [];
    // While the newcomer waits, the live node keeps beating.
    const attempt = twin.register(async (ms) => {
      waited.push(ms);
      await live.ownership.tick();
    });
    await expect(attempt).rejects.toThrow(NodeIdInUseError);
    expect(waited.length).toBe(1);
    expect(waited[0]).toBeGreaterThan(leaseMs - 5_000);
    // The node dies: its heartbeat ages past the lease, and a restart takes the id over without waiting.
    await age(url, "UPDATE orq_nodes SET heartbeat_at = now() - make_interval(secs => $1::double precision / 1000 + 1)", [leaseMs]);
    await twin.register(async () => {
      throw new Error("should not wait");
    });
    // The old process, if it was only paused, finds its id taken on its next tick.
    await expect(live.ownership.tick()).rejects.toThrow(NodeIdInUseError);
  });
});
