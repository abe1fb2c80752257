// One shard's stored state read from any Store (the memory store in tests),
// as the PostgreSQL store hands it to an engine adopting the shard
// (PostgresStore.storedShard). The memory store's acked log does not keep
// shards, so the caller says which acked keys are the shard's, and where
// each schedule lives (the placement's scheduleShard).

import type { Store, StoredShard } from "../../src/storage/store.ts";
import { parseId } from "../../src/lib/id-grammar.ts";

import type { ScheduleRecord } from "../../src/storage/record.ts";

export interface ShardOf {
  /** The shard an acked key's item lived on (default: none, -1). */
  ackedShard?: (key: number) => number;
  /** The shard a schedule lives on (default: every schedule is this one's). */
  scheduleShard?: (record: ScheduleRecord) => number;
}

export function storedShardOf(store: Store, shard: number, of: ShardOf = {}): StoredShard {
  return { shard, items: [...itemsOf(store, shard)], ...shardParts(store, (each) => each === shard, of) };
}

function itemsOf(store: Store, shard: number) {
  return [...store.loadShards({ bytes: false })].find((loaded) => loaded.shard === shard)?.items ?? [];
}

/** The outcomes, acked log and schedules of the shards `on` accepts. */
function shardParts(store: Store, on: (shard: number) => boolean, of: ShardOf): Omit<StoredShard, "shard" | "items"> {
  const ackedShard = of.ackedShard ?? (() => -1);
  const outcomes = [...store.loadOutcomes()].filter((outcome) => on(parseId(outcome.id)?.shard ?? -1));
  const ackedLog = [...store.loadAckedLog()].map((record) => {
    const keep = record.keys.map((key) => on(ackedShard(key)));
    return {
      ...record,
      nsIndexes: record.nsIndexes.filter((_, i) => keep[i]),
      shards: [],
      keys: record.keys.filter((_, i) => keep[i]),
    };
  });
  const schedules = [...store.loadSchedules()].filter((record) => of.scheduleShard === undefined || on(of.scheduleShard(record)));
  return { outcomes, ackedLog, schedules };
}

/** The store as a node serving only `served` recovers from it: the other shards' items, outcomes and schedules are left out. */
export function storeServing(store: Store, served: ReadonlySet<number>, of: ShardOf = {}): Store {
  const on = (shard: number) => served.has(shard);
  const view: Partial<Store> = {
    loadShards: (options) => [...store.loadShards(options)].filter((loaded) => on(loaded.shard)),
    loadOutcomes: () => shardParts(store, on, of).outcomes,
    loadAckedLog: () => shardParts(store, on, of).ackedLog,
    loadSchedules: () => shardParts(store, on, of).schedules,
  };
  return new Proxy(store, {
    get(target, property) {
      if (property in view) return view[property as keyof Store];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
