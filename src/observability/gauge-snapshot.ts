// Turns what the server already knows (the engine's `stats` view, the
// storage breakers, the connection count) into the GaugeSnapshot that
// metrics.ts exports at scrape time. Only this file knows the shape of the
// engine's stats record (src/engine/stats.ts), so a change there breaks here
// and in its test, not silently in a dashboard.

import type { BreakerState } from "../storage/circuit-breaker.ts";
import type { GaugeSnapshot, ItemStateName } from "./metrics.ts";

const itemStates: readonly ItemStateName[] = ["ready", "delayed", "waiting", "leased", "dead"];

/**
 * Topic label for the items of a namespace whose per-topic list the engine
 * cut short (it lists at most limits.topicsPageMax topics per namespace): the
 * namespace total minus the listed topics, so sums over `topic` stay exact.
 */
export const unlistedTopicLabel = "_unlisted";

export interface GaugeInputs {
  /** engine.stats(null, nowMs): every namespace. */
  engineStats: Record<string, unknown>;
  breakers: readonly BreakerState[];
  connections: number;
}

type Counts = Record<ItemStateName, number>;

function countsOf(value: unknown): Counts {
  const record = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const counts = {} as Counts;
  for (const state of itemStates) {
    const n = record[state];
    counts[state] = typeof n === "number" ? n : 0;
  }
  return counts;
}

export function gaugeSnapshot(inputs: GaugeInputs): GaugeSnapshot {
  const items: Array<GaugeSnapshot["items"][number]> = [];
  const unmatchable: Array<{ ns: string; topic: string; count: number }> = [];
  const namespaces = (inputs.engineStats.namespaces ?? {}) as Record<string, Record<string, unknown>>;
  let waitersFromNamespaces = 0;
  for (const [ns, entry] of Object.entries(namespaces)) {
    const total = countsOf(entry);
    const listed: Counts = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
    const topics = (entry.topics ?? {}) as Record<string, unknown>;
    for (const [topic, value] of Object.entries(topics)) {
      const counts = countsOf(value);
      for (const state of itemStates) {
        items.push({ ns, topic, state, count: counts[state] });
        listed[state] += counts[state];
      }
      const report = (value as Record<string, unknown> | null)?.unmatchable as Record<string, unknown> | undefined;
      if (typeof report?.items === "number") unmatchable.push({ ns, topic, count: report.items });
    }
    if (entry.topicsTruncated === true) {
      for (const state of itemStates) items.push({ ns, topic: unlistedTopicLabel, state, count: total[state] - listed[state] });
    }
    if (typeof entry.parkedWaiters === "number") waitersFromNamespaces += entry.parkedWaiters;
  }
  const engine = inputs.engineStats.engine as Record<string, unknown> | undefined;
  const waitersTotal = engine?.parkedWaitersTotal;
  const pausedTopics = engine?.pausedTopics;
  return {
    items,
    breakers: inputs.breakers.map((state, shard) => ({ shard, state })),
    connections: inputs.connections,
    waiters: typeof waitersTotal === "number" ? waitersTotal : waitersFromNamespaces,
    unmatchable,
    pausedTopics: typeof pausedTopics === "number" ? pausedTopics : 0,
  };
}
