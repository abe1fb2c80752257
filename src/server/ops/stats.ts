// stats: the engine's counters and gauges plus the server's own, for one
// namespace (`ns`), or for every namespace the connection's token may see.
// The engine's view (engine/reads/stats-shape.ts) is written to the wire here field
// by field, under the snake_case names docs/PROTOCOL.md documents. Namespace
// and topic names are map keys chosen by users and a signature's `requires`
// holds the client's feature names, so all three are copied as they are.
// Field order is the wire's: test/server/stats-wire.test.ts pins the bytes.

import type { EngineGauges, EngineStats, NamespaceCounters, NamespaceStats, StatsTotals, TopicStats, UnmatchableReport } from "../../engine/api.ts";
import { nameKeyed } from "../../lib/name-keyed.ts";
import { scopeList } from "../auth.ts";
import { reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

function totalsToWire(t: StatsTotals): Source {
  return { ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, topics: t.topics, parked_waiters: t.parkedWaiters };
}

function countersToWire(c: NamespaceCounters): Source {
  return {
    enqueued: c.enqueued,
    delivered: c.delivered,
    acked: c.acked,
    nacked: c.nacked,
    expired: c.expired,
    cancelled: c.cancelled,
    dead: c.dead,
    redriven: c.redriven,
  };
}

function unmatchableToWire(u: UnmatchableReport): Source {
  return {
    asked: u.asked,
    askers: u.askers,
    items: u.items,
    signatures: u.signatures.map((s) => ({ requires: s.requires, items: s.items })),
    signatures_truncated: u.signaturesTruncated,
  };
}

function topicToWire(t: TopicStats): Source {
  return { ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, unmatchable: unmatchableToWire(t.unmatchable) };
}

function namespaceToWire(n: NamespaceStats): Source {
  const topics: Source = nameKeyed();
  for (const [name, topic] of Object.entries(n.topics)) topics[name] = topicToWire(topic);
  return {
    ready: n.ready,
    delayed: n.delayed,
    waiting: n.waiting,
    leased: n.leased,
    dead: n.dead,
    topic_count: n.topicCount,
    topics,
    topics_truncated: n.topicsTruncated,
    unmatchable: n.unmatchable,
    parked_waiters: n.parkedWaiters,
    counters: countersToWire(n.counters),
    quota: n.quota === null ? null : { enqueue_per_minute: n.quota.enqueuePerMinute, available: n.quota.available },
  };
}

function engineToWire(e: EngineGauges): Source {
  return {
    items: e.items,
    topics: e.topics,
    namespaces: e.namespaces,
    outcomes_retained: e.outcomesRetained,
    results_retained: e.resultsRetained,
    results_retained_bytes: e.resultsRetainedBytes,
    item_waits_parked: e.itemWaitsParked,
    item_waits_answered_total: e.itemWaitsAnsweredTotal,
    deadlines: e.deadlines,
    dependency_edges: e.dependencyEdges,
    signatures: e.signatures,
    worker_kinds: e.workerKinds,
    background_write_failures: e.backgroundWriteFailures,
    enqueue_rollbacks: e.enqueueRollbacks,
    paused_topics: e.pausedTopics,
    parked_waiters_total: e.parkedWaitersTotal,
    passed_over: { ...e.passedOver },
    preference_deliveries: { ...e.preferenceDeliveries },
  };
}

/** The `stats` reply's engine part, in wire names and wire order (`server` is added after it). */
export function statsToWire(stats: EngineStats): Source {
  const namespaces: Source = nameKeyed();
  for (const [name, ns] of Object.entries(stats.namespaces)) namespaces[name] = namespaceToWire(ns);
  const wire: Source = { now_ms: stats.nowMs, totals: totalsToWire(stats.totals), counters: countersToWire(stats.counters), namespaces };
  if (stats.engine !== undefined) wire.engine = engineToWire(stats.engine);
  return wire;
}

/** A namespace kept only in memory (all of them under --store memory) says `durability: "memory"`; others carry no such field. */
function markMemoryNamespaces(value: Source, memoryNamespaces: readonly string[]): void {
  if (memoryNamespaces.length === 0) return;
  const all = memoryNamespaces.includes("*");
  const namespaces = value.namespaces as Record<string, Source>;
  for (const name of Object.keys(namespaces)) {
    if (all || memoryNamespaces.includes(name)) (namespaces[name] as Record<string, unknown>).durability = "memory";
  }
}

export const statsOp: OpSpec = {
  namespace: "optional",
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(_request: Source, ns: string | null, ctx: OpContext): OpOutcome {
    const scope = ctx.session.scope;
    const namespaces = ns !== null ? [ns] : scope === null ? [] : scopeList(scope);
    const value = statsToWire(ctx.engine.stats(namespaces, ctx.nowMs));
    markMemoryNamespaces(value, ctx.serverInfo.memoryNamespaces ?? []);
    value.server = ctx.serverStats();
    return reply(value);
  },
};
