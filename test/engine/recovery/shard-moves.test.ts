// Goal: a shard moving out of and back into a running cluster engine
// (Engine.dropShard, Engine.adoptShardInSteps) leaves it exactly as a fresh
// recovery over the same shards would be. Seeded random runs of enqueues
// (groups, keys, `after` across shards, delays, TTLs), dequeues, acks,
// nacks, extends, cancels, schedules and clock jumps on a 4-shard engine;
// every few steps a shard is dropped, or the dropped one adopted again in
// steps of a random size while the others keep working; half the adoptions
// file the shard ahead of its claim from a read taken while the other node
// still serves it (decisions/053), and drop that copy at the claim when the
// shard changed since. The engine's commits never write a shard it does not
// serve (as PostgreSQL's fence would refuse). After each move the
// engine is compared with one recovered from a copy of the store over the
// same shards (while a shard is dropped, a second engine serves it and acks,
// nacks and cancels there, so dependencies on it end elsewhere): stats, topics' counts, every state's `list` (ready items in
// delivery order), `get` of every item (state, attempt, lease end, delay),
// groups' counts, dead letters and schedules; every index passes
// checkInvariants. At the end both engines are drained by dequeues and
// must deliver the same items, in the same order within each group.
//
// Replay one seed: ORQ_SHARD_MOVES_SEED=7 ORQ_SHARD_MOVES_STEPS=400 bun test test/engine/recovery/shard-moves.test.ts

import { expect, test } from "bun:test";
import { ClusterWriter } from "../../../src/cluster/cluster-writer.ts";
import { clusterPlacement } from "../../../src/cluster/placement.ts";
import type { Delivery, EnqueueItemInput, LiveStateName } from "../../../src/engine/api.ts";
import { Engine } from "../../../src/engine/engine.ts";
import { ManualClock } from "../../../src/lib/clock.ts";
import { parseId } from "../../../src/lib/id-grammar.ts";
import { defaultLimits } from "../../../src/limits.ts";
import { GroupCommitter } from "../../../src/storage/group-commit.ts";
import { MemoryStore } from "../../../src/storage/memory/memory-store.ts";
import type { ScheduleRecord } from "../../../src/storage/record.ts";
import type { CommitBatch, Store, StoredShard } from "../../../src/storage/store.ts";
import type { FiledShard } from "../../../src/engine/recovery/shard-moves.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { storeServing, storedShardOf, type ShardOf } from "../../support/stored-shard.ts";
import { item } from "../support/item-input.ts";

const shards = 4;
const ns = "n";
const topics = ["a", "b", "c"];
const states: LiveStateName[] = ["ready", "delayed", "waiting", "leased", "dead"];

/**
 * An engine of a cluster node over a MemoryStore, serving `served`. With
 * `fenced`, a commit that writes an item or outcome of a shard it does not
 * serve fails the test, as PostgreSQL's fence would refuse it.
 */
function clusterEngine(store: MemoryStore, served: Set<number>, clock: ManualClock, recoverFrom: Store = store, fenced = false) {
  const committing = !fenced
    ? store
    : new Proxy(store, {
        get(target, property) {
          if (property === "commit") {
            return (batch: CommitBatch) => {
              for (const part of batch.shards) if (part.keys.length > 0 && !served.has(part.shard)) throw new Error(`a commit wrote shard ${part.shard}, not served`);
              for (const outcome of batch.outcomes) if (!served.has(parseId(outcome.id)?.shard ?? -1)) throw new Error(`a commit wrote outcome ${outcome.id}, not served`);
              return target.commit(batch);
            };
          }
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
  const committer = new GroupCommitter(committing, { clock });
  const writer = new ClusterWriter(committer, (shard) => served.has(shard));
  const placement = clusterPlacement(shards, (shard) => served.has(shard));
  const engine = Engine.recover({ store: recoverFrom, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs(), cluster: { placement } });
  return { engine, committer, placement };
}

/**
 * What a cluster node's poll of `after` ids on other nodes' shards reports
 * (ops/remote-dependencies.ts; storage/postgres/remote-ends.ts): a live
 * item is left out, a stored dead letter is dead, an outcome says how it
 * ended, and no row at all counts as acked.
 */
function settleRemote(engine: Engine, store: MemoryStore, elsewhere: (id: string) => boolean, nowMs: number): void {
  const outcomes = new Map([...store.loadOutcomes()].map(({ id, record }) => [id, record.outcome]));
  for (const id of engine.remoteWaitedOn(elsewhere, 10_000)) {
    const parsed = parseId(id);
    if (parsed === null) continue;
    const stored = store.readItem(parsed.shard, parsed.key);
    if (stored !== null && stored.state !== "dead") continue;
    engine.remoteDependencyEnded(id, stored !== null ? "dead" : (outcomes.get(id) ?? "acked"), nowMs);
  }
}

/** Everything a client can see of the engine's shards, at nowMs. */
function observe(engine: Engine, ids: readonly string[], served: ReadonlySet<number>, nowMs: number, withAcked: boolean) {
  engine.tick(nowMs);
  const stats = engine.stats(null, nowMs).engine!;
  const topicCounts = engine.topics(ns, { prefix: null, limit: 1000, after: null }).topics;
  const lists: Record<string, string[]> = {};
  const groups: Record<string, unknown> = {};
  const dead: Record<string, string[]> = {};
  for (const topic of topics) {
    for (const state of states) lists[`${topic} ${state}`] = engine.list(ns, topic, { state, limit: 1000, after: null }, nowMs).items.map((each) => each.id);
    groups[topic] = engine.groups(ns, topic, { limit: 1000, after: null }).groups.filter((group) => group.ready + group.leased + group.delayed + group.waiting + group.dead > 0);
    // `dead` answers in the order items died; recovery files them in key order: compare as sets.
    dead[topic] = engine.dead(ns, topic, 1000).items.map((each) => each.id).sort();
  }
  const mine = ids.filter((id) => served.has(parseId(id)?.shard ?? -1));
  const got = engine.get(ns, mine, nowMs);
  const schedules = engine.scheduleList(ns, { limit: 100, after: null }).schedules.map(({ name, nextAtMs, lastAtMs, lastId }) => ({ name, nextAtMs, lastAtMs, lastId }));
  return {
    counts: { items: stats.items, topics: stats.topics, edges: stats.dependencyEdges, signatures: stats.signatures, schedules: stats.schedules, outcomes: withAcked ? stats.outcomesRetained : null },
    topicCounts,
    lists,
    groups,
    dead,
    items: got.ok ? got.value.items : got.failure.kind,
    schedules,
  };
}

/** Whether a shard's stored state is as it was read (acked-log records of other shards' acks hold none of its keys). */
function sameRows(now: StoredShard, read: StoredShard): boolean {
  const rows = (shard: StoredShard) => ({ ...shard, ackedLog: [...shard.ackedLog].filter((record) => record.keys.length > 0) });
  return Bun.deepEquals(rows(now), rows(read));
}

async function run(seed: number, steps: number): Promise<{ aheadKept: number; aheadDropped: number }> {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const clock = new ManualClock(1_700_000_000_000);
  const store = new MemoryStore({ shards });
  const served = new Set([0, 1, 2, 3]);
  const { engine, committer, placement } = clusterEngine(store, served, clock, store, true);
  const ids: string[] = [];
  const shardOfKey = new Map<number, number>();
  let receipts: Delivery[] = [];
  let dropped: number | null = null;
  /** Adoptions filed ahead whose read was kept, and those dropped as stale at the claim. */
  let aheadKept = 0;
  let aheadDropped = 0;
  const of: ShardOf = {
    ackedShard: (key) => shardOfKey.get(key) ?? -1,
    scheduleShard: (record: ScheduleRecord) => placement.scheduleShard(record.ns, record.name, { topic: String(record.item.topic), group: typeof record.item.group === "string" ? record.item.group : null }),
  };

  const enqueue = (): void => {
    const inputs: EnqueueItemInput[] = [];
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      const live = ids.filter((id) => served.has(parseId(id)?.shard ?? -1));
      const after = random() < 0.25 && ids.length > 0 ? [pick(random() < 0.7 && live.length > 0 ? live : ids), ...(random() < 0.3 ? [pick(ids)] : [])] : null;
      inputs.push(
        item(pick(topics), {
          priority: Math.floor(random() * 4),
          delayMs: random() < 0.2 ? Math.floor(random() * 5_000) : null,
          ttlMs: random() < 0.1 ? 1_000 + Math.floor(random() * 20_000) : null,
          maxAttempts: 2,
          group: random() < 0.4 ? pick(["g1", "g2", "g3"]) : null,
          key: random() < 0.2 ? `k${Math.floor(random() * 50)}` : null,
          after,
        }),
      );
    }
    const result = engine.enqueue(ns, inputs, clock.nowMs());
    if (!result.ok) return;
    for (const id of result.value.value.ids) {
      if (ids.includes(id)) continue;
      ids.push(id);
      const parsed = parseId(id);
      if (parsed !== null) shardOfKey.set(parsed.key, parsed.shard);
    }
  };

  const act = (): void => {
    const roll = random();
    const now = clock.nowMs();
    if (roll < 0.35) enqueue();
    else if (roll < 0.55) {
      const out = engine.dequeue(ns, { topics: [{ topic: pick(topics), count: 1 + Math.floor(random() * 3) }], capabilities: null, waitMs: 0, leaseMs: 1_000 + Math.floor(random() * 10_000), owner: 1 }, now);
      if (out.ok && out.kind === "done") receipts.push(...out.deliveries);
      // Schedule ticks' items are known from their deliveries (an acked one's shard is needed for the acked log).
      if (out.ok && out.kind === "done") for (const delivery of out.deliveries) shardOfKey.set(parseId(delivery.id)?.key ?? -1, parseId(delivery.id)?.shard ?? -1);
    } else if (roll < 0.65 && receipts.length > 0) {
      const delivery = receipts.splice(Math.floor(random() * receipts.length), 1)[0] as Delivery;
      if (served.has(parseId(delivery.id)?.shard ?? -1)) engine.ack(ns, [delivery.receipt], now);
    } else if (roll < 0.72 && receipts.length > 0) {
      const delivery = receipts.splice(Math.floor(random() * receipts.length), 1)[0] as Delivery;
      if (served.has(parseId(delivery.id)?.shard ?? -1)) engine.nack(ns, [{ receipt: delivery.receipt, delayMs: random() < 0.5 ? 2_000 : null, metadata: null }], now);
    } else if (roll < 0.76 && receipts.length > 0) {
      const delivery = pick(receipts);
      if (served.has(parseId(delivery.id)?.shard ?? -1)) engine.extend(ns, [{ receipt: delivery.receipt, leaseMs: 5_000 }], now);
    } else if (roll < 0.8 && ids.length > 0) {
      const id = pick(ids);
      if (served.has(parseId(id)?.shard ?? -1)) engine.cancel(ns, [id], now);
    } else if (roll < 0.82) {
      const name = pick(["s1", "s2", "s3"]);
      const group = random() < 0.5 ? "g1" : null;
      // The cluster engine's router sends a schedule of a shard not served elsewhere (MOVED), and refuses one
      // that would move a stored schedule to another shard (ClusterEngine.schedule's `stored`).
      const shard = placement.scheduleShard(ns, name, { topic: "a", group });
      const stored = [...store.loadSchedules()].find((record) => record.name === name);
      if (served.has(shard) && (stored === undefined || of.scheduleShard?.(stored) === shard)) {
        engine.schedule(ns, { name, cron: null, everyMs: 5_000, timezone: "UTC", catchUp: "one", item: item("a", { group }) }, now);
      }
    } else {
      clock.advance(Math.floor(random() * 3_000));
      engine.tick(clock.nowMs());
    }
  };

  /** The engine against one recovered from a copy of what is committed, over the same shards. */
  const compare = async (where: string): Promise<void> => {
    // Due deadlines (schedule ticks among them) run and land before the copy, so the fresh engine finds them done.
    engine.tick(clock.nowMs());
    await committer.drain();
    engine.checkInvariants();
    const copy = store.durableCopy();
    const fresh = clusterEngine(copy, served, clock, storeServing(copy, served, of));
    fresh.engine.checkInvariants();
    const now = clock.nowMs();
    // A fresh recovery counts an `after` id on an unserved shard as live until the node's poll reports it; so would a running node after a drop.
    settleRemote(engine, copy, (id) => placement.elsewhere(id), now);
    settleRemote(fresh.engine, copy, (id) => fresh.placement.elsewhere(id), now);
    const ours = observe(engine, ids, served, now, dropped === null);
    const theirs = observe(fresh.engine, ids, served, now, dropped === null);
    await committer.drain();
    await fresh.committer.drain();
    expect({ where, ...ours }).toEqual({ where, ...theirs });
  };

  /** While a shard is dropped, another node serves it: it dequeues, acks, nacks and cancels there (it enqueues nothing: its keys would clash). */
  let other: { engine: Engine; committer: GroupCommitter; receipts: Delivery[] } | null = null;
  const otherAct = (): void => {
    if (other === null) return;
    const now = clock.nowMs();
    const roll = random();
    if (roll < 0.4) {
      const out = other.engine.dequeue(ns, { topics: [{ topic: pick(topics), count: 2 }], capabilities: null, waitMs: 0, leaseMs: 5_000, owner: 2 }, now);
      if (out.ok && out.kind === "done") other.receipts.push(...out.deliveries);
    } else if (roll < 0.7 && other.receipts.length > 0) {
      const delivery = other.receipts.splice(Math.floor(random() * other.receipts.length), 1)[0] as Delivery;
      if (random() < 0.8) other.engine.ack(ns, [delivery.receipt], now);
      else other.engine.nack(ns, [{ receipt: delivery.receipt, delayMs: null, metadata: null }], now);
    } else if (roll < 0.8 && ids.length > 0) {
      const id = pick(ids);
      if (parseId(id)?.shard === dropped) other.engine.cancel(ns, [id], now);
    }
  };

  const move = async (): Promise<void> => {
    if (dropped === null) {
      const shard = Math.floor(random() * shards);
      served.delete(shard);
      await committer.drain();
      engine.dropShard(shard);
      dropped = shard;
      receipts = receipts.filter((delivery) => parseId(delivery.id)?.shard !== shard);
      await compare(`after dropping shard ${shard}`);
      const alone = new Set([shard]);
      const node = clusterEngine(store, alone, clock, storeServing(store, alone, of));
      other = { engine: node.engine, committer: node.committer, receipts: [] };
      return;
    }
    const shard = dropped;
    const stepSize = (): number => 1 + Math.floor(random() * 40);
    /** Run a move's steps to the end; the other shards keep working (and the clock moves) between them. */
    const inSteps = <T>(steps: Generator<unknown, T>): T => {
      for (;;) {
        const step = steps.next();
        if (step.done === true) return step.value;
        if (random() < 0.3) act();
        if (random() < 0.2) otherAct();
      }
    };
    let filed: FiledShard | null = null;
    let read: StoredShard | null = null;
    if (random() < 0.5) {
      // Read ahead while the other node still serves it, and filed here unserved (decisions/053): its deadlines
      // wait, nothing of it is written (the fenced commits check), and the other node may still change it.
      read = storedShardOf(store, shard, of);
      filed = inSteps(engine.fileShardInSteps(read, clock.nowMs(), stepSize(), true));
      const otherStill = random() < 0.5;
      for (let i = 0; i < 20; i++) {
        act();
        if (otherStill && random() < 0.5) otherAct();
      }
      engine.checkInvariants();
    }
    if (other !== null) {
      await other.committer.drain();
      other = null;
    }
    // The claim: the copy filed ahead is kept only if the shard did not change since the read; else it goes.
    if (filed !== null && !sameRows(storedShardOf(store, shard, of), read as StoredShard)) {
      engine.dropShard(shard);
      filed = null;
      aheadDropped++;
    } else if (filed !== null) aheadKept++;
    const stored = storedShardOf(store, shard, of);
    filed ??= inSteps(engine.fileShardInSteps(stored, clock.nowMs(), stepSize(), false));
    inSteps(engine.finishShardInSteps(filed, clock.nowMs(), stepSize()));
    served.add(shard);
    engine.shardServed(shard, stored.schedules, clock.nowMs());
    dropped = null;
    await compare(`after adopting shard ${shard}`);
  };

  for (let step = 0; step < steps; step++) {
    act();
    if (random() < 0.5) otherAct();
    if (step % 8 === 7) await committer.drain();
    if (step % 40 === 39) await compare(`before move ${step}`);
    if (step % 40 === 39) await move();
  }
  if (dropped !== null) await move();
  await compare("at the end");

  // Both drained by dequeues: the same deliveries in the same order.
  const copy = store.durableCopy();
  const fresh = clusterEngine(copy, served, clock, storeServing(copy, served, of));
  // Per topic and group, in delivery order: the rotation between a topic's groups keeps state a restart does not (its
  // virtual times), so a fresh recovery may interleave groups differently; within a group the order is the items'.
  const drain = (each: Engine): Record<string, string[]> => {
    const order: Record<string, string[]> = {};
    for (const topic of topics) {
      const out = each.dequeue(ns, { topics: [{ topic, count: 1000 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 }, clock.nowMs());
      if (!out.ok || out.kind !== "done") continue;
      for (const delivery of out.deliveries) (order[`${topic} ${delivery.group ?? "-"}`] ??= []).push(`${delivery.id}#${delivery.attempt}`);
    }
    return order;
  };
  expect(drain(engine)).toEqual(drain(fresh.engine));
  await committer.drain();
  await fresh.committer.drain();
  return { aheadKept, aheadDropped };
}

const seedFromEnv = Number(process.env.ORQ_SHARD_MOVES_SEED ?? "");
const stepsFromEnv = Number(process.env.ORQ_SHARD_MOVES_STEPS ?? "");
const seeds = Number.isSafeInteger(seedFromEnv) && process.env.ORQ_SHARD_MOVES_SEED !== undefined ? [seedFromEnv] : [1, 2, 3, 4, 5, 6];

const ahead = { kept: 0, dropped: 0 };
for (const seed of seeds) {
  test(`seed ${seed}: a shard dropped and adopted again (filed ahead of its claim or not) leaves the engine as a fresh recovery over the same shards`, async () => {
    const counts = await run(seed, Number.isSafeInteger(stepsFromEnv) && stepsFromEnv > 0 ? stepsFromEnv : 400);
    ahead.kept += counts.aheadKept;
    ahead.dropped += counts.aheadDropped;
  });
}

test.skipIf(seeds.length === 1)("the seeds file shards ahead both ways: kept at the claim, and dropped as stale", () => {
  expect(ahead.kept).toBeGreaterThan(0);
  expect(ahead.dropped).toBeGreaterThan(0);
});
