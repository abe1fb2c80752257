// The `stats` reply: per namespace its state counts (in total and per topic),
// its counters since start, its parked dequeues and quota; totals over the
// namespaces shown; and engine-wide gauges. Each listed topic also carries
// its unmatchable-items report (matching/unmatchable.ts): ready items no worker that
// asked lately may take. stats-shape.ts types the view and docs/SEMANTICS.md
// documents it. Counters live in memory only: they restart at 0 with the server.

import { nameKeyed } from "../../lib/name-keyed.ts";
import type { Limits } from "../../limits.ts";
import type { Namespace, NamespaceCounters } from "../state/namespace.ts";
import type { EngineGauges, EngineStats, NamespaceStats, StateCounts, StatsTotals, TopicStats } from "./stats-shape.ts";
import type { UnmatchableReporter } from "../matching/unmatchable.ts";
import type { WaiterRegistry } from "../ops/waiters.ts";

export interface StatsInput {
  nowMs: number;
  namespaces: ReadonlyMap<string, Namespace>;
  filter: string[] | null;
  waiters: WaiterRegistry;
  limits: Limits;
  /** Builds each listed topic's unmatchable-items report. */
  unmatchable: UnmatchableReporter;
  /** The engine-wide gauges the engine counts itself (the waiters' total is added here). */
  engine: Omit<EngineGauges, "parkedWaitersTotal">;
}

function zeroCounts(): StateCounts {
  return { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
}

function zeroCounters(): NamespaceCounters {
  return { enqueued: 0, delivered: 0, acked: 0, nacked: 0, expired: 0, cancelled: 0, dead: 0, redriven: 0 };
}

export function buildStats(input: StatsInput): EngineStats {
  const names = input.filter ?? [...input.namespaces.keys()];
  const totals: StatsTotals = { ...zeroCounts(), topics: 0, parkedWaiters: 0 };
  const totalCounters = zeroCounters();
  const perNamespace = nameKeyed<NamespaceStats>();
  for (const name of names) {
    const ns = input.namespaces.get(name);
    if (ns === undefined) continue;
    const states = zeroCounts();
    const topics = nameKeyed<TopicStats>();
    let listed = 0;
    let unmatchable = 0;
    for (const topicName of ns.sortedNames()) {
      const t = ns.topics.get(topicName);
      if (t === undefined) continue;
      states.ready += t.ready;
      states.delayed += t.delayed;
      states.waiting += t.waiting;
      states.leased += t.leased;
      states.dead += t.dead;
      if (listed < input.limits.topicsPageMax) {
        const report = input.unmatchable.report(t, input.nowMs);
        topics[topicName] = { ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, unmatchable: report };
        unmatchable += report.items;
        listed++;
      }
    }
    const parkedWaiters = input.waiters.namespaceCount(name);
    perNamespace[name] = {
      ...states,
      topicCount: ns.topics.size,
      topics,
      topicsTruncated: ns.topics.size > listed,
      // Over the listed topics only, like the per-topic reports it sums.
      unmatchable,
      parkedWaiters,
      counters: { ...ns.counters },
      quota: ns.bucket === null ? null : { enqueuePerMinute: ns.bucket.perMinute, available: Math.floor(ns.bucket.available(input.nowMs)) },
    };
    totals.ready += states.ready;
    totals.delayed += states.delayed;
    totals.waiting += states.waiting;
    totals.leased += states.leased;
    totals.dead += states.dead;
    totals.topics += ns.topics.size;
    totals.parkedWaiters += parkedWaiters;
    for (const k of Object.keys(totalCounters) as Array<keyof NamespaceCounters>) totalCounters[k] += ns.counters[k];
  }
  const out: EngineStats = { nowMs: input.nowMs, totals, counters: totalCounters, namespaces: perNamespace };
  // Engine-wide gauges describe every namespace, so a filtered (scoped) view leaves them out.
  if (input.filter === null) out.engine = { ...input.engine, parkedWaitersTotal: input.waiters.total };
  return out;
}
