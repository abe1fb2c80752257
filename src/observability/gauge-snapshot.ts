// Turns what the server already knows (the engine's `stats` view, the
// store's circuit breaker, the connection count) into the GaugeSnapshot that
// metrics.ts exports at scrape time. Only this file knows the shape of the
// engine's stats view (src/engine/reads/stats-shape.ts), restated as GaugeStats, so
// a change there breaks the type check here, not silently in a dashboard.

import type { PostgresCommitFigures } from "./postgres-commits.ts";
import { liveStateNames, type LiveStateName } from "../protocol/live-states.ts";
import type { BreakerState } from "../storage/circuit-breaker.ts";
import type { RecentValuesFigures } from "../storage/store.ts";
import type { GaugeSnapshot } from "./metrics.ts";

/**
 * Topic label for the items of a namespace whose per-topic list the engine
 * cut short (it lists at most limits.topicsPageMax topics per namespace): the
 * namespace total minus the listed topics, so sums over `topic` stay exact.
 */
export const unlistedTopicLabel = "_unlisted";

type Counts = Record<LiveStateName, number>;

/**
 * The part of the engine's stats view (src/engine/reads/stats-shape.ts, EngineStats)
 * the gauges read. Observability may not import the engine, so the shape is
 * restated here; cli/serve.ts passes an EngineStats, so a change there that
 * drops a field read here fails the type check.
 */
export interface GaugeStats {
  namespaces: Record<string, Counts & { topics: Record<string, Counts & { unmatchable?: { items: number } }>; topicsTruncated: boolean; parkedWaiters: number }>;
  engine?: {
    parkedWaitersTotal: number;
    pausedTopics: number;
    prefetchKeysTotal: number;
    passedOver?: Readonly<Record<string, number>>;
    preferenceDeliveries?: Readonly<Record<string, number>>;
    itemWaitsParked?: number;
    itemWaitsAnsweredTotal?: number;
    resultsRetained?: number;
    resultsRetainedBytes?: number;
    schedules?: number;
    scheduleTicks?: Readonly<Record<string, number>>;
  };
}

export interface GaugeInputs {
  /** engine.stats(null, nowMs): every namespace. */
  engineStats: GaugeStats;
  breaker: BreakerState;
  connections: number;
  /** The store map's resident bytes (cli/mapped-pages.ts); null where unknown. */
  mapResidentBytes?: number | null;
  /** The LMDB store's ring of recent values; absent or null without one. */
  recentValues?: RecentValuesFigures | null;
  /** Cluster mode: the PostgreSQL store's commit counts (postgres-commits.ts); absent on a single node. */
  postgresCommits?: PostgresCommitFigures | null;
  /** Cluster mode: shards read ahead of a takeover, kept and read again (PostgresStore.readAheadCounts). */
  shardReadsAhead?: { kept: number; readAgain: number } | null;
  /** Cluster mode: shards filed ahead of a claim, finished at the claim or dropped (ClusterEngine.filedAheadCounts). */
  shardsFiledAhead?: { finished: number; dropped: number } | null;
}

export function gaugeSnapshot(inputs: GaugeInputs): GaugeSnapshot {
  const items: Array<GaugeSnapshot["items"][number]> = [];
  const unmatchable: Array<{ ns: string; topic: string; count: number }> = [];
  let waitersFromNamespaces = 0;
  for (const [ns, entry] of Object.entries(inputs.engineStats.namespaces)) {
    const listed: Counts = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
    for (const [topic, value] of Object.entries(entry.topics)) {
      for (const state of liveStateNames) {
        items.push({ ns, topic, state, count: value[state] });
        listed[state] += value[state];
      }
      if (value.unmatchable !== undefined) unmatchable.push({ ns, topic, count: value.unmatchable.items });
    }
    if (entry.topicsTruncated) {
      for (const state of liveStateNames) items.push({ ns, topic: unlistedTopicLabel, state, count: entry[state] - listed[state] });
    }
    waitersFromNamespaces += entry.parkedWaiters;
  }
  const engine = inputs.engineStats.engine;
  return {
    items,
    breaker: inputs.breaker,
    connections: inputs.connections,
    waiters: engine?.parkedWaitersTotal ?? waitersFromNamespaces,
    unmatchable,
    pausedTopics: engine?.pausedTopics ?? 0,
    storeRead: { mapResidentBytes: inputs.mapResidentBytes ?? null, prefetchKeysTotal: engine?.prefetchKeysTotal ?? 0, recentValues: inputs.recentValues ?? null },
    passedOver: engine?.passedOver ?? {},
    preferenceDeliveries: engine?.preferenceDeliveries ?? {},
    postgresCommits: inputs.postgresCommits ?? null,
    ...(inputs.shardReadsAhead === null || inputs.shardReadsAhead === undefined ? {} : { shardReadsAhead: { kept: inputs.shardReadsAhead.kept, read_again: inputs.shardReadsAhead.readAgain } }),
    ...(inputs.shardsFiledAhead === null || inputs.shardsFiledAhead === undefined ? {} : { shardsFiledAhead: { ...inputs.shardsFiledAhead } }),
    itemWaits: { parked: engine?.itemWaitsParked ?? 0, answeredTotal: engine?.itemWaitsAnsweredTotal ?? 0 },
    results: { retained: engine?.resultsRetained ?? 0, retainedBytes: engine?.resultsRetainedBytes ?? 0 },
    schedules: { schedules: engine?.schedules ?? 0, ticks: engine?.scheduleTicks ?? {} },
  };
}
