// Goal: the cluster engine's routing and placement over a real Engine on the
// memory store: FNV-1a matches its published vectors and the contract's key
// layout; keyed items land on their key's shard and `after` items on their
// first id's; a malformed id or receipt names no shard; a request naming a
// shard this node does not serve is answered by the router (MOVED) with nothing
// done; a plain enqueue never lands on an unserved shard; deliveries wait for
// their lease commit; a shard given up leaves the running engine and one
// taken on loads into it in steps, while the other shards serve throughout
// (a parked dequeue on them stays parked, a parked wait on the moving
// shard's items answers) and the moving shard answers as not served until
// it is loaded; a handover (freeze) answers parked waits and
// refuses new ones; another node's pause and resume change the
// engine without a write (parked dequeues served at the end, a timed one ends
// at its deadline) and a resume of a pause not seen here is still written; the
// engine's own pause writes count as on their way until their commit settles;
// the node's leased quota buckets are kept apart from the shards, so a
// shard's move neither refills nor forgets them. A schedule whose item
// names a group goes to the group's shard; a replacement that would move a
// schedule to another shard is refused; unschedule goes to the shard the
// schedule is stored on.

import { describe, expect, test } from "bun:test";
import { ClusterEngine, shardPrefix, type ShardMoves, type ShardRouter } from "../../src/cluster/cluster-engine.ts";
import { ClusterWriter } from "../../src/cluster/cluster-writer.ts";
import { clusterPlacement } from "../../src/cluster/placement.ts";
import { malformedIds, malformedReceipts } from "../support/malformed-ids.ts";
import { Engine } from "../../src/engine/engine.ts";
import type { Failure } from "../../src/engine/api.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { fnv1a32, shardOfGroup, shardOfKey, shardOfSchedule } from "../../src/protocol/key-shard.ts";
import { QuotaLeases } from "../../src/cluster/quota-leases.ts";
import { clusterLimits } from "../../src/limits.ts";
import { storedShardOf } from "../support/stored-shard.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { CommitBatch, CommitResult, StoredShard } from "../../src/storage/store.ts";

const encoder = new TextEncoder();

function item(extra: { key?: string; after?: string[] } = {}) {
  return {
    topic: "t",
    priority: 0,
    payload: encoder.encode("x"),
    metadata: new Uint8Array(0),
    deliverAtMs: null,
    delayMs: null,
    leaseMs: null,
    ttlMs: null,
    delivery: "at_least_once" as const,
    maxAttempts: 10,
    requires: null,
    after: extra.after ?? null,
    key: extra.key ?? null,
  };
}

/**
 * A node of 4 shards serving `served`; other shards are MOVED to "other".
 * `wanted` is what the node's ownership holds (moveShards brings the engine
 * to it); a shard joins `served` when its adoption ends, as the node's does.
 */
function node(served: Set<number>, namespaces: Record<string, { enqueuePerMinute: number | null }> = {}, quotas?: QuotaLeases) {
  const clock = new ManualClock();
  const store = new MemoryStore({ shards: 4 });
  const committer = new GroupCommitter(store, { clock });
  const writer = new ClusterWriter(committer, (shard) => served.has(shard));
  const placement = clusterPlacement(4, (shard) => served.has(shard));
  const router: ShardRouter = {
    route: (shard): Failure | null =>
      served.has(shard) ? null : { kind: "shard_elsewhere", message: `shard ${shard} elsewhere`, moved: { shard, nodeId: "other", addr: "10.0.0.2:7420", mapVersion: 9 } },
  };
  const wanted = new Set(served);
  const turns = { count: 0 };
  let stopwatchMs = 0;
  /** Shards read ahead of a claim (the store's: each read an object of its own), and claims still loading. */
  const ahead = new Map<number, { stored: StoredShard; read: object }>();
  const loading = new Set<number>();
  const moves: ShardMoves = {
    target: () => [...wanted].filter((shard) => !loading.has(shard)),
    readAhead: () => [...ahead.keys()],
    storedAhead: (shard) => ahead.get(shard) ?? null,
    aheadWanted: (shard, read) => ahead.get(shard)?.read === read || loading.has(shard),
    stored: (shard) => storedShardOf(store, shard),
    serve: (shard) => void served.add(shard),
    forgotten: () => {},
    nowMs: () => clock.nowMs(),
    // Every look at the clock costs a step's budget: each step is one batch of records, then a turn.
    stopwatchMs: () => (stopwatchMs += clusterLimits.adoptTurnMs),
    turn: () => {
      turns.count++;
      return new Promise((resolve) => setTimeout(resolve, 0));
    },
  };
  const engine = new ClusterEngine(
    Engine.recover({ store, writer, limits: defaultLimits, namespaces, nowMs: clock.nowMs(), cluster: { placement, quotaBuckets: quotas?.quotaBuckets } }),
    router,
    placement,
    4,
    () => committer.drain(),
    undefined,
    undefined,
    moves,
  );
  return { clock, store, committer, engine, wanted, served, turns, ahead, loading };
}

describe("key placement", () => {
  test("FNV-1a 32 matches its published vectors; the key hashes ns, topic and key with NUL separators", () => {
    expect(fnv1a32(encoder.encode(""))).toBe(0x811c9dc5);
    expect(fnv1a32(encoder.encode("a"))).toBe(0xe40c292c);
    expect(fnv1a32(encoder.encode("foobar"))).toBe(0xbf9cf968);
    expect(shardOfKey("ns", "t", "k", 7)).toBe(fnv1a32(encoder.encode("ns\u0000t\u0000k")) % 7);
    expect(shardOfKey("ns", "t", "k", 7)).not.toBe(-1);
  });

  test("shardPrefix reads an id's or receipt's shard, -1 for none", () => {
    expect(shardPrefix("3:17")).toBe(3);
    expect(shardPrefix("12:5:1:2")).toBe(12);
    expect(shardPrefix(":5")).toBe(-1);
    expect(shardPrefix("x:5")).toBe(-1);
    expect(shardPrefix("17")).toBe(-1);
  });

  test("shardPrefix reads no shard from a malformed id or receipt, though Number() would", () => {
    for (const bad of [...malformedIds, ...malformedReceipts]) expect(shardPrefix(bad)).toBe(-1);
  });

  test("placement reads no shard from a malformed id: not elsewhere, and an `after` item so named goes anywhere", () => {
    const placement = clusterPlacement(4, (shard) => shard === 0);
    expect(placement.elsewhere("1:5")).toBe(true);
    expect(placement.elsewhere("0:5")).toBe(false);
    expect(placement.shardFor("ns", item({ after: ["2:5"] }))).toBe(2);
    for (const bad of malformedIds) {
      expect(placement.elsewhere(bad)).toBe(false);
      expect(placement.shardFor("ns", item({ after: [bad] }))).toBe(-1);
    }
  });
});

describe("ClusterEngine", () => {
  test("keyed items go to their key's shard when served, MOVED (nothing done) when not", async () => {
    const { engine, clock, committer } = node(new Set([0, 1, 2, 3]));
    const key = "k1";
    const result = engine.enqueue("n", [item({ key })], clock.nowMs());
    expect(result.ok && result.value.value.ids[0]?.startsWith(`${shardOfKey("n", "t", key, 4)}:`)).toBe(true);
    await committer.drain();
    const other = node(new Set([...[0, 1, 2, 3]].filter((s) => s !== shardOfKey("n", "t", key, 4))));
    const refused = other.engine.enqueue("n", [item({ key })], other.clock.nowMs());
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.failure).toMatchObject({ kind: "shard_elsewhere", moved: { nodeId: "other", addr: "10.0.0.2:7420" } });
    await other.committer.drain();
    expect(other.store.commitHistory).toEqual([]);
  });

  test("an `after` item goes to its first dependency's shard; plain items only to served shards", async () => {
    const served = new Set([1, 3]);
    const { engine, clock, committer } = node(served);
    for (let i = 0; i < 8; i++) {
      const r = engine.enqueue("n", [item()], clock.nowMs());
      expect(r.ok && served.has(shardPrefix(r.value.value.ids[0]!))).toBe(true);
    }
    const first = engine.enqueue("n", [item()], clock.nowMs());
    const firstId = first.ok ? first.value.value.ids[0]! : "";
    await committer.drain();
    const dependent = engine.enqueue("n", [item({ after: [firstId] })], clock.nowMs());
    expect(dependent.ok && shardPrefix(dependent.value.value.ids[0]!)).toBe(shardPrefix(firstId));
  });

  test("ids and receipts on unserved shards are answered by the router; served ones reach the engine", () => {
    const { engine, clock } = node(new Set([0]));
    const moved = engine.get("n", ["0:1", "2:5"], clock.nowMs());
    expect(moved.ok ? null : moved.failure.moved?.shard).toBe(2);
    const ack = engine.ack("n", ["3:1:1:1"], clock.nowMs());
    expect(ack.ok ? null : ack.failure.kind).toBe("shard_elsewhere");
    const local = engine.get("n", ["0:1", "bogus"], clock.nowMs());
    expect(local.ok && local.value.items).toEqual([null, null]);
    // A wait is answered by its ids' shard owner, as get is.
    const movedWait = engine.wait("n", ["0:1", "2:5"], 10_000, 1, clock.nowMs());
    expect(movedWait.ok ? null : movedWait.failure.moved?.shard).toBe(2);
    const localWait = engine.wait("n", ["0:1"], 10_000, 1, clock.nowMs());
    expect(localWait.ok && localWait.kind === "done" && localWait.items).toEqual([null]);
  });

  test("a handover (freeze) answers parked waits with the states then, and refuses new ones", async () => {
    const { engine, clock, committer } = node(new Set([0, 1, 2, 3]));
    const enq = engine.enqueue("n", [item()], clock.nowMs());
    const id = enq.ok ? enq.value.value.ids[0]! : "";
    if (enq.ok) await enq.value.durable;
    const parked = engine.wait("n", [id], 10_000, 1, clock.nowMs());
    expect(parked.ok && parked.kind).toBe("parked");
    engine.freeze();
    const during = engine.wait("n", [id], 10_000, 1, clock.nowMs());
    expect(during.ok ? null : during.failure.kind).toBe("shard_unserved");
    if (parked.ok && parked.kind === "parked") expect(await parked.waiter).toMatchObject([{ id, state: "ready" }]);
    await committer.drain();
  });

  test("a dequeue's reply waits for its lease commit, even for at_least_once items", async () => {
    const { engine, clock, store, committer } = node(new Set([0, 1, 2, 3]));
    const enq = engine.enqueue("n", [item()], clock.nowMs());
    if (enq.ok) await enq.value.durable;
    store.pauseCommits();
    const out = engine.dequeue("n", { topics: [{ topic: "t", count: 1 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 }, clock.nowMs());
    expect(out.ok && out.kind === "done" && out.durable !== null).toBe(true);
    store.resumeCommits();
    await committer.drain();
  });

  test("a shard given up leaves the running engine; taken on again, it loads in steps, unserved until loaded, while the others serve", async () => {
    const { engine, clock, committer, wanted, served, turns } = node(new Set([0, 1, 2, 3]));
    // Enough items on shard 1 for more than one step (clusterLimits.adoptRecordsPerStep).
    const ids: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const enq = engine.enqueue("n", Array.from({ length: 1000 }, (_, i) => item({ key: `k${batch}-${i}` })), clock.nowMs());
      if (enq.ok) {
        ids.push(...enq.value.value.ids);
        await enq.value.durable;
      }
    }
    expect(ids.length).toBe(6000);
    const onShard1 = ids.filter((id) => id.startsWith("1:"));
    const onShard0 = ids.filter((id) => id.startsWith("0:"));
    expect(onShard1.length).toBeGreaterThan(clusterLimits.adoptRecordsPerStep);
    const parked = engine.dequeue("n", { topics: [{ topic: "other", count: 1 }], capabilities: null, waitMs: 10_000, leaseMs: null, owner: 1 }, clock.nowMs());
    expect(parked.ok && parked.kind).toBe("parked");

    const waitMoving = engine.wait("n", [onShard1[0]!], 10_000, 1, clock.nowMs());
    const waitKept = engine.wait("n", [onShard0[0]!], 10_000, 1, clock.nowMs());
    expect([waitMoving.ok && waitMoving.kind, waitKept.ok && waitKept.kind]).toEqual(["parked", "parked"]);
    let keptAnswered = false;
    if (waitKept.ok && waitKept.kind === "parked") void waitKept.waiter.then(() => (keptAnswered = true));

    // Shard 1 goes: unserved at once (the node's onDrop), its items leave once the commits landed.
    served.delete(1);
    wanted.delete(1);
    await engine.moveShards();
    // A parked wait on its item answered with the state then; one on a kept shard's item still waits.
    if (waitMoving.ok && waitMoving.kind === "parked") expect(await waitMoving.waiter).toMatchObject([{ id: onShard1[0], state: "ready" }]);
    expect(keptAnswered).toBe(false);
    expect(engine.moveCounts.dropped).toBe(1);
    expect(engine.itemCount).toBe(6000 - onShard1.length);
    const moved = engine.get("n", [onShard1[0]!], clock.nowMs());
    expect(moved.ok ? null : moved.failure.kind).toBe("shard_elsewhere");
    const kept = engine.get("n", onShard0, clock.nowMs());
    expect(kept.ok && kept.value.items.every((state) => state !== null)).toBe(true);

    // Back again: loaded in steps (a turn between them), served only at the end; shard 0 answers meanwhile.
    wanted.add(1);
    const turnsBefore = turns.count;
    const adopting = engine.moveShards();
    expect(served.has(1)).toBe(false);
    const during = engine.get("n", [onShard0[0]!], clock.nowMs());
    expect(during.ok).toBe(true);
    const unserved = engine.get("n", [onShard1[0]!], clock.nowMs());
    expect(unserved.ok).toBe(false);
    await adopting;
    expect(turns.count).toBeGreaterThan(turnsBefore);
    expect(served.has(1)).toBe(true);
    expect(engine.moveCounts.adopted).toBe(1);
    expect(engine.itemCount).toBe(6000);
    const back = engine.get("n", onShard1, clock.nowMs());
    expect(back.ok && back.value.items.map((state) => state?.id)).toEqual(onShard1);

    // Lost and claimed again before the next pass (a commit of it failed, say): what the engine held is stale, so the
    // pass drops the shard and adopts it afresh from the store.
    served.delete(1);
    engine.shardLost(1);
    await engine.moveShards();
    expect(engine.moveCounts).toEqual({ adopted: 2, dropped: 2, filedAhead: 0 });
    expect(served.has(1)).toBe(true);
    expect(engine.itemCount).toBe(6000);

    // The dequeue parked on another topic all along was never answered; an item there serves it now.
    const enq = engine.enqueue("n", [{ ...item(), topic: "other" }], clock.nowMs());
    if (enq.ok) await enq.value.durable;
    if (parked.ok && parked.kind === "parked") expect((await parked.waiter).deliveries.length).toBe(1);
    await committer.drain();
  });
});

describe("a shard filed ahead of its claim (decisions/053)", () => {
  /** Items of shard 1 as the store holds them now, by id: state and dead reason. */
  const storedOn1 = (store: MemoryStore) =>
    Object.fromEntries((storedShardOf(store, 1).items as Array<{ key: number; record: { state: string; deadReason: string | null } }>).map(({ key, record }) => [`1:${key}`, `${record.state} ${record.deadReason ?? ""}`]));

  test("filed unserved while the claim waits; kept at the claim it only finishes; let go it is dropped; stale it is adopted afresh", async () => {
    const { engine, clock, committer, store, wanted, served, ahead, loading } = node(new Set([0, 1, 2, 3]));
    const enq = engine.enqueue("n", Array.from({ length: 400 }, (_, i) => item({ key: `k${i}` })), clock.nowMs());
    if (!enq.ok) throw new Error("enqueue refused");
    await enq.value.durable;
    const onShard1 = enq.value.value.ids.filter((id) => id.startsWith("1:"));
    // A lease on shard 1 that will end while the shard is filed ahead.
    const got = engine.dequeue("n", { topics: [{ topic: "t", count: 400 }], capabilities: null, waitMs: 0, leaseMs: 1_000, owner: 1 }, clock.nowMs());
    if (!got.ok || got.kind !== "done") throw new Error("dequeue");
    await got.durable;
    const leasedOn1 = got.deliveries.filter((delivery) => delivery.id.startsWith("1:")).map((delivery) => delivery.id);
    expect(leasedOn1.length).toBe(onShard1.length);

    // Shard 1 goes to another node.
    served.delete(1);
    wanted.delete(1);
    await engine.moveShards();
    expect(engine.itemCount).toBe(400 - onShard1.length);

    // Its owner falls silent: the read ahead is filed, unserved, and nothing of it is written, though its leases end.
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    const before = storedOn1(store);
    await engine.moveShards();
    expect(engine.moveCounts).toMatchObject({ filedAhead: 1, adopted: 0 });
    expect(engine.itemCount).toBe(400);
    expect(engine.aheadCount).toBe(1);
    expect(served.has(1)).toBe(false);
    const refused = engine.get("n", [onShard1[0]!], clock.nowMs());
    expect(refused.ok ? null : refused.failure.kind).toBe("shard_elsewhere");
    clock.advance(5_000);
    engine.tick(clock.nowMs());
    await committer.drain();
    expect(storedOn1(store)).toEqual(before);

    // The claim loads and keeps the rows read: the pass only finishes the shard, and its ended leases run then.
    const kept = ahead.get(1)!.read;
    ahead.delete(1);
    loading.add(1);
    await engine.moveShards();
    engine.aheadClaimed(1, kept);
    expect(engine.itemCount).toBe(400);
    expect(served.has(1)).toBe(false);
    loading.delete(1);
    wanted.add(1);
    await engine.moveShards();
    expect(served.has(1)).toBe(true);
    expect(engine.moveCounts).toEqual({ adopted: 1, dropped: 1, filedAhead: 1 });
    expect(engine.aheadCount).toBe(0);
    const back = engine.get("n", leasedOn1, clock.nowMs());
    expect(back.ok && back.value.items.map((state) => state?.state)).toEqual(leasedOn1.map(() => "ready"));
    await committer.drain();
    expect(Object.values(storedOn1(store)).every((state) => state.startsWith("pending"))).toBe(true);

    // Given up and filed ahead again, then let go (its owner renewed): dropped at the next pass.
    served.delete(1);
    wanted.delete(1);
    await engine.moveShards();
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    await engine.moveShards();
    expect(engine.itemCount).toBe(400);
    ahead.delete(1);
    await engine.moveShards();
    expect(engine.itemCount).toBe(400 - onShard1.length);
    expect(engine.moveCounts).toEqual({ adopted: 1, dropped: 3, filedAhead: 2 });

    // Filed from one read, which was let go and read again before the next pass: that copy is of the old read,
    // so it goes and the new read is filed (a claim keeping the new read would otherwise finish the old copy).
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    await engine.moveShards();
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    await engine.moveShards();
    expect(engine.moveCounts).toEqual({ adopted: 1, dropped: 4, filedAhead: 4 });
    expect(engine.itemCount).toBe(400);
    ahead.delete(1);
    await engine.moveShards();
    expect(engine.moveCounts).toEqual({ adopted: 1, dropped: 5, filedAhead: 4 });

    // Filed ahead, then the owner deletes an item before the claim: the claim finds the rows changed, so the copy
    // filed ahead is dropped and the store's fresh one adopted.
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    await engine.moveShards();
    const gone = Number(onShard1[0]!.split(":")[1]);
    const removed = await store.commit({ shards: [{ shard: 1, keys: [gone], records: [null] }], outcomes: [], meta: null });
    expect(removed.failedShards.size).toBe(0);
    ahead.delete(1);
    engine.aheadClaimed(1, null);
    wanted.add(1);
    await engine.moveShards();
    expect(served.has(1)).toBe(true);
    expect(engine.itemCount).toBe(399);
    expect(engine.moveCounts).toEqual({ adopted: 2, dropped: 6, filedAhead: 5 });
    const lost = engine.get("n", [onShard1[0]!], clock.nowMs());
    expect(lost.ok && lost.value.items[0]).toBe(null);
    await committer.drain();
  });

  test("filed ahead, an item waiting on another shard's item waits for the finish: that item's cancel reaches it only then", async () => {
    const { engine, clock, committer, store, wanted, served, ahead } = node(new Set([0, 1, 2, 3]));
    // One item on each shard to depend on, found by key.
    const deps = engine.enqueue("n", Array.from({ length: 40 }, (_, i) => item({ key: `d${i}` })), clock.nowMs());
    if (!deps.ok) throw new Error("enqueue refused");
    await deps.value.durable;
    const on1 = deps.value.value.ids.find((id) => id.startsWith("1:"))!;
    const on0 = deps.value.value.ids.find((id) => id.startsWith("0:"))!;
    // Placed on its first dependency's shard (1), waiting on an item of shard 0 too.
    const waiter = engine.enqueue("n", [item({ after: [on1, on0] })], clock.nowMs());
    if (!waiter.ok) throw new Error("enqueue refused");
    await waiter.value.durable;
    const waiterId = waiter.value.value.ids[0]!;
    expect(waiterId.startsWith("1:")).toBe(true);

    served.delete(1);
    wanted.delete(1);
    await engine.moveShards();
    ahead.set(1, { stored: storedShardOf(store, 1), read: {} });
    await engine.moveShards();
    expect(engine.moveCounts.filedAhead).toBe(1);
    // Its dependency on shard 0 is cancelled while shard 1 is only filed ahead: nothing of shard 1 is written.
    const cancelled = engine.cancel("n", [on0], clock.nowMs());
    if (!cancelled.ok) throw new Error("cancel refused");
    await cancelled.value.durable;
    await committer.drain();
    expect(storedOn1(store)[waiterId]).toBe("pending ");

    // Claimed with the rows kept: the finish files the waiting item and kills it for its cancelled dependency.
    ahead.delete(1);
    wanted.add(1);
    await engine.moveShards();
    expect(served.has(1)).toBe(true);
    const state = engine.get("n", [waiterId], clock.nowMs());
    expect(state.ok && state.value.items[0]?.state).toBe("dead");
    await committer.drain();
    expect(storedOn1(store)[waiterId]).toMatch(/^dead /);
  });
});

describe("pauses from other nodes", () => {
  const take = { topics: [{ topic: "t", count: 1 }], capabilities: null, leaseMs: null, owner: 1 };

  test("applyStoredPause pauses and lifts without writing; the lift serves parked dequeues; a timed one ends at its deadline", async () => {
    const { engine, clock, store, committer } = node(new Set([0, 1, 2, 3]));
    const enq = engine.enqueue("n", [item(), item()], clock.nowMs());
    if (enq.ok) await enq.value.durable;
    engine.applyStoredPause("n", "t", null, null, clock.nowMs());
    expect(engine.pausedUntil("n", "t")).toBeNull();
    expect([...store.loadPauses()]).toEqual([]);
    const parked = engine.dequeue("n", { ...take, waitMs: 60_000 }, clock.nowMs());
    expect(parked.ok && parked.kind).toBe("parked");
    engine.applyStoredPause("n", "t", null, undefined, clock.nowMs());
    expect(engine.pausedUntil("n", "t")).toBeUndefined();
    if (parked.ok && parked.kind === "parked") expect((await parked.waiter).deliveries).toHaveLength(1);
    engine.applyStoredPause("n", "t", null, clock.nowMs() + 1_000, clock.nowMs());
    const paused = engine.dequeue("n", { ...take, waitMs: 0 }, clock.nowMs());
    expect(paused.ok && paused.kind === "done" && paused.deliveries).toEqual([]);
    clock.advance(1_000);
    engine.tick(clock.nowMs());
    expect(engine.pausedUntil("n", "t")).toBeUndefined();
    const after = engine.dequeue("n", { ...take, waitMs: 0 }, clock.nowMs());
    expect(after.ok && after.kind === "done" && after.deliveries.length).toBe(1);
    await committer.drain();
  });

  test("a resume of a topic this node never saw paused is written all the same (resumed: false)", async () => {
    const { engine, clock, store, committer } = node(new Set([0, 1, 2, 3]));
    const paused = engine.pause("n", "t", null, clock.nowMs());
    if (paused.ok) await paused.value.durable;
    expect([...store.loadPauses()]).toHaveLength(1);
    engine.applyStoredPause("n", "t", null, undefined, clock.nowMs()); // as if another node's resume was polled, but its row is still here
    const resumed = engine.resume("n", "t", clock.nowMs());
    expect(resumed.ok && resumed.value.value).toEqual({ resumed: false });
    if (resumed.ok) await resumed.value.durable;
    expect([...store.loadPauses()]).toEqual([]);
    await committer.drain();
  });
});

describe("own pause writes on their way", () => {
  /** A MemoryStore that holds each commit until a `release()` lets one through (a slow database). */
  class GatedStore extends MemoryStore {
    private permits = 0;
    private readonly held: Array<() => void> = [];

    override async commit(batch: CommitBatch): Promise<CommitResult> {
      if (this.permits > 0) this.permits--;
      else await new Promise<void>((resolve) => this.held.push(resolve));
      return super.commit(batch);
    }

    /** Let the oldest held commit through, or the next one if none is held yet. */
    release(): void {
      const next = this.held.shift();
      if (next === undefined) this.permits++;
      else next();
    }
  }

  function gatedNode() {
    const clock = new ManualClock();
    const store = new GatedStore({ shards: 4 });
    const committer = new GroupCommitter(store, { clock });
    const all = () => true;
    const engine = new ClusterEngine(
      Engine.recover({ store, writer: new ClusterWriter(committer, all), limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs(), cluster: { placement: clusterPlacement(4, all) } }),
      { route: () => null },
      clusterPlacement(4, all),
      4,
      () => committer.drain(),
    );
    return { engine, clock, committer, release: () => store.release() };
  }

  /** Let the commit's promise reactions run (the write counts as on its way until they have). */
  const reactions = () => new Promise((resolve) => setTimeout(resolve, 0));

  test("a pause, a resume of a pause never seen, and a timed pause's end are on their way until their commit settles", async () => {
    const { engine, clock, committer, release } = gatedNode();
    expect(engine.pauseWriting("n", "t")).toBe(false);
    const paused = engine.pause("n", "t", 1_000, clock.nowMs());
    expect(engine.pauseWriting("n", "t")).toBe(true);
    expect(engine.pauseWriting("n", "other")).toBe(false);
    await reactions();
    expect(engine.pauseWriting("n", "t")).toBe(true);
    release();
    if (paused.ok) await paused.value.durable;
    await reactions();
    expect(engine.pauseWriting("n", "t")).toBe(false);

    // The timed pause ends in a tick: its delete rides the tick's background write.
    clock.advance(1_000);
    engine.tick(clock.nowMs());
    expect(engine.pausedUntil("n", "t")).toBeUndefined();
    expect(engine.pauseWriting("n", "t")).toBe(true);
    release();
    await committer.drain();
    await reactions();
    expect(engine.pauseWriting("n", "t")).toBe(false);

    // A resume of a topic not paused here: the engine's pause (none) is unchanged, but its delete is on the way.
    const resumed = engine.resume("n", "t", clock.nowMs());
    expect(resumed.ok && resumed.value.value).toEqual({ resumed: false });
    expect(engine.pauseWriting("n", "t")).toBe(true);
    release();
    if (resumed.ok) await resumed.value.durable;
    await reactions();
    expect(engine.pauseWriting("n", "t")).toBe(false);
  });
});

describe("leased quotas across a shard's move", () => {
  test("after a shard left and came back the engine admits from the same leased bucket: no refill, no fresh burst", async () => {
    const clock = new ManualClock();
    const drawn: number[] = [];
    const quotas = new QuotaLeases(
      { q: { enqueuePerMinute: 600 }, free: { enqueuePerMinute: null } },
      async (draw) => {
        drawn.push(draw.want);
        return { granted: Math.max(0, Math.min(draw.want, 5)), left: 0 };
      },
      clock,
    );
    await quotas.period(clock.nowMs()); // the floor: 3 tokens (600 a minute over 250 ms, rounded up)
    const { engine, committer, served, wanted } = node(new Set([0, 1, 2, 3]), { q: { enqueuePerMinute: 600 } }, quotas);
    expect(engine.enqueue("q", [item(), item()], clock.nowMs()).ok).toBe(true);
    served.delete(0);
    wanted.delete(0);
    await engine.moveShards();
    wanted.add(0);
    await engine.moveShards();
    clock.advance(60_000); // a local bucket would be full again; a leased one only holds what was drawn
    expect(engine.enqueue("q", [item()], clock.nowMs()).ok).toBe(true);
    const over = engine.enqueue("q", [item()], clock.nowMs());
    expect(over.ok ? null : over.failure.kind).toBe("rate_limited");
    expect(drawn).toEqual([3, 6]); // the floor, then at once twice the use so far (3 items)
    expect(engine.enqueue("free", Array.from({ length: 50 }, () => item()), clock.nowMs()).ok).toBe(true);
    await committer.drain();
  });
});

describe("schedules placed by their item's group", () => {
  const schedule = (group: string | null) => ({ name: "digest", cron: null, everyMs: 1000, timezone: "UTC", catchUp: "one" as const, item: { ...item(), group } });

  test("a grouped schedule goes to its group's shard (MOVED when not served), its ticks' items with it", async () => {
    // Shards of 4: "digest" alone hashes to 3, group "a" of topic t to 2, "c" to 0.
    expect([shardOfSchedule("n", "digest", { topic: "t", group: null }, 4), shardOfGroup("n", "t", "a", 4), shardOfGroup("n", "t", "c", 4)]).toEqual([3, 2, 0]);
    const elsewhere = node(new Set([3]));
    const moved = elsewhere.engine.schedule("n", schedule("a"), elsewhere.clock.nowMs(), null);
    expect(moved.ok ? null : [moved.failure.kind, moved.failure.moved?.shard]).toEqual(["shard_elsewhere", 2]);
    const { engine, clock, committer } = node(new Set([2]));
    const set = engine.schedule("n", schedule("a"), clock.nowMs(), null);
    expect(set.ok).toBe(true);
    await committer.drain();
    clock.advance(1000);
    engine.tick(clock.nowMs());
    await committer.drain();
    expect(engine.scheduleList("n", { limit: 10, after: null }).schedules[0]?.lastId?.startsWith("2:")).toBe(true);
  });

  test("a replacement that would move a schedule to another shard is refused (item.group), whether its row is stored or only held here", async () => {
    const { engine, clock, committer } = node(new Set([0, 1, 2, 3]));
    expect(engine.schedule("n", schedule("a"), clock.nowMs(), null).ok).toBe(true);
    await committer.drain();
    for (const [group, stored] of [[null, 2], ["c", 2], [null, null], ["c", null]] as const) {
      const refused = engine.schedule("n", schedule(group), clock.nowMs(), stored);
      expect(refused.ok ? null : [refused.failure.kind, refused.failure.at]).toEqual(["invalid_value", { kind: "scheduleItem", part: { of: "group" } }]);
    }
    // Same group, same shard: replaced.
    expect(engine.schedule("n", { ...schedule("a"), everyMs: 2000 }, clock.nowMs(), 2).ok).toBe(true);
  });

  test("unschedule goes to the shard the schedule is stored on, else its name's", () => {
    const { engine, clock } = node(new Set([0]));
    const stored = engine.unschedule("n", "digest", clock.nowMs(), 2);
    expect(stored.ok ? null : stored.failure.moved?.shard).toBe(2);
    const byName = engine.unschedule("n", "digest", clock.nowMs(), null);
    expect(byName.ok ? null : byName.failure.moved?.shard).toBe(3);
  });
});
