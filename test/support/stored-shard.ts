// One shard's stored state read from any Store (the memory store in tests),
// as the PostgreSQL store hands it to an engine adopting the shard
// (PostgresStore.storedShard). The memory store's acked log does not keep
// shards, so the caller says which acked keys are the shard's, and where
// each schedule lives (the placement's scheduleShard).

import type { Store, StoredShard } from "../../src/storage/store.ts";
import { parseId } from "../../src/lib/id-grammar.ts";

import type { ScheduleRecord } from "../../src/storage/record.ts";

export interface ShardOf {
  /** Whether an acked key was an item of this shard (default: none). */
  ackedOnShard?: (key: number) => boolean;
  /** The shard a schedule lives on (default: every schedule is this one's). */
  scheduleShard?: (record: ScheduleRecord) => number;
}

export function storedShardOf(store: Store, shard: number, of: ShardOf = {}): StoredShard {
  const ackedOnShard = of.ackedOnShard ?? (() => false);
  const items = [...store.loadShards({ bytes: false })].find((loaded) => loaded.shard === shard)?.items ?? [];
  const outcomes = [...store.loadOutcomes()].filter((outcome) => parseId(outcome.id)?.shard === shard);
  const ackedLog = [...store.loadAckedLog()].map((record) => {
    const keep = record.keys.map((key) => ackedOnShard(key));
    return {
      ...record,
      nsIndexes: record.nsIndexes.filter((_, i) => keep[i]),
      shards: [],
      keys: record.keys.filter((_, i) => keep[i]),
    };
  });
  const schedules = [...store.loadSchedules()].filter((record) => of.scheduleShard === undefined || of.scheduleShard(record) === shard);
  return { shard, items: [...items], outcomes, ackedLog, schedules };
}

/** The store as a node serving only `served` recovers from it: the other shards' items, outcomes and schedules are left out. */
export function storeServing(store: Store, served: ReadonlySet<number>, of: ShardOf = {}): Store {
  const view: Partial<Store> = {
    loadShards: (options) => [...store.loadShards(options)].filter((loaded) => served.has(loaded.shard)),
    loadOutcomes: () => [...store.loadOutcomes()].filter((outcome) => served.has(parseId(outcome.id)?.shard ?? -1)),
    loadAckedLog: () => [...served].flatMap((shard) => [...storedShardOf(store, shard, of).ackedLog]).sort((a, b) => a.endedAtMs - b.endedAtMs),
    loadSchedules: () => [...store.loadSchedules()].filter((record) => of.scheduleShard === undefined || served.has(of.scheduleShard(record))),
  };
  return new Proxy(store, {
    get(target, property) {
      if (property in view) return view[property as keyof Store];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
