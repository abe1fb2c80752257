// orq's Prometheus metrics: the one file that spells out their options
// (metric names, labels, buckets) and owns the prom-client registry. The
// server calls `requestDone` once per answered request (counted in plain
// tables by request-metrics.ts, exported at scrape time); commit-sampler.ts calls
// `commitObserved` once per LMDB commit and `commitTotals` with the writer's
// running totals; gauges (items, the store breaker, connections,
// waiters) are pulled from a snapshot source once per scrape, so the hot path
// never maintains them. Every label value that could come from a client is
// bounded here, so a hostile client cannot grow the series set without limit.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from "prom-client";
import { metricsTopicSeriesMax } from "../limits.ts";
import { errorCodes } from "../protocol/error-codes.ts";
import type { LiveStateName } from "../protocol/live-states.ts";
import { opNames } from "../protocol/op-names.ts";
import type { BreakerState } from "../storage/circuit-breaker.ts";
import { RequestMetrics } from "./request-metrics.ts";
import { type StoreReadFigures, storeReadGauges } from "./store-gauges.ts";
import { passedOverCounter, preferenceDeliveriesCounter } from "./passed-over.ts";
import { type PostgresCommitFigures, postgresCommitCounters } from "./postgres-commits.ts";
import { scheduleMetrics } from "./schedule-ticks.ts";
import { RunningTotals } from "./running-totals.ts";
import { shardReadsAheadCounter, shardsFiledAheadCounter } from "./shard-reads-ahead.ts";

/**
 * Circuit-breaker states (the store's one breaker), exported one-hot:
 * `orq_storage_breaker_state{state}` is 1 for the current one. Listed
 * through a Record so a state added to the breaker is a type error here.
 */
const breakerStateSet: Record<BreakerState, true> = { closed: true, half_open: true, probing: true, open: true };
const breakerStates = Object.keys(breakerStateSet) as BreakerState[];
export type BreakerStateName = BreakerState;

/** What the server reports at scrape time. Counts are current values, not deltas. */
export interface GaugeSnapshot {
  items: ReadonlyArray<{ ns: string; topic: string; state: LiveStateName; count: number }>;
  /** The store's circuit breaker; null when the source has none (no series exported). */
  breaker: BreakerStateName | null;
  connections: number;
  /** Dequeues parked in long-poll. */
  waiters: number;
  /**
   * Ready items per listed topic that no worker asking lately may take (the
   * stats report, docs/MATCHING.md). Optional so older sources still fit.
   */
  unmatchable?: ReadonlyArray<{ ns: string; topic: string; count: number }>;
  /** Topics paused now (the `pause` op). Optional so older sources still fit. */
  pausedTopics?: number;
  /** The delivery read path's memory and prefetch (store-gauges.ts). Optional so older sources still fit. */
  storeRead?: StoreReadFigures;
  /** Deliveries passed over by bounds since start, by reason (passed-over.ts). Optional so older sources still fit. */
  passedOver?: Readonly<Record<string, number>>;
  preferenceDeliveries?: Readonly<Record<string, number>>;
  postgresCommits?: PostgresCommitFigures | null;
  /** Cluster mode: shards read ahead of a takeover, by what their claim found ("kept", "read_again"); absent on a single node. */
  shardReadsAhead?: Readonly<Record<string, number>>;
  shardsFiledAhead?: Readonly<Record<string, number>>;
  /** `wait` requests parked now and answered since start. Optional so older sources still fit. */
  itemWaits?: { parked: number; answeredTotal: number };
  /** `ack` results kept with acked outcomes, and their bytes. Optional so older sources still fit. */
  results?: { retained: number; retainedBytes: number };
  /** Schedules held and their ticks since start by outcome (schedule-ticks.ts). Optional so older sources still fit. */
  schedules?: { schedules: number; ticks: Readonly<Record<string, number>> };
}

export type GaugeSource = () => GaugeSnapshot;

/** Absolute totals since start; see Metrics.commitTotals. */
export interface CommitTotals {
  commitsTotal: number;
  commitFailuresTotal: number;
  writeSetsRejectedTotal: number;
  /** Commits whose samples the poller could not see (more than a ring's worth between polls). */
  samplesDroppedTotal: number;
}

export interface MetricsOptions {
  /** Reported as `orq_build_info{version}`. */
  version?: string;
  /** Export prom-client's process_* and nodejs_* metrics (CPU, memory, fds, event-loop lag). Default true. */
  processMetrics?: boolean;
  /** Where gauges come from; may also be set later with `setGaugeSource`. */
  gaugeSource?: GaugeSource;
  /**
   * Most distinct (ns, topic) pairs exported by `orq_items`; the rest are
   * summed into topic "_other" of their namespace. Topics are created by
   * clients, so without a bound one client could make a scrape arbitrarily
   * large. Default `metricsTopicSeriesMax` (limits.ts).
   */
  topicSeriesMax?: number;
  /**
   * The op and code labels of the beanstalkd port's requests
   * (beanstalk/request-labels.ts; observability imports no front end, so
   * `orq serve` passes them), counted in `orq_requests_total` and
   * `orq_request_duration_seconds` beside the contract's ops and codes.
   */
  otherRequestLabels?: Readonly<{ ops: readonly string[]; codes: readonly string[] }>;
}


/**
 * The topic label for topics past `topicSeriesMax`. A client may name a real
 * topic "_other" too (any 1..255-byte name is valid), so
 * `orq_items_topics_truncated` says whether folding happened.
 */
export const otherTopicLabel = "_other";

export interface Metrics {
  /** One answered request: `code` is "OK" or the contract's error code. Durations include any long-poll wait. */
  requestDone(op: string, code: string, durationMs: number): void;
  /** One storage commit: how many records and write sets (requests) it carried, and how long it took. */
  commitObserved(records: number, writeSets: number, durationMs: number): void;
  /**
   * The storage writer's running totals (absolute values since start, as
   * commitStats() reports them); the counters advance by the difference from
   * the previous call, so calling it often is cheap and exact.
   */
  commitTotals(totals: CommitTotals): void;
  setGaugeSource(source: GaugeSource): void;
  /** The Prometheus text exposition (format 0.0.4). */
  render(): Promise<string>;
  readonly contentType: string;
}

// Requests are labelled by the contract's ops; any other op (answered
// UNKNOWN_OP) is counted under op "unknown".
const unknownOpLabel = "unknown";
const knownCodes: ReadonlySet<string> = new Set<string>(["OK", ...errorCodes]);

/** 50 µs (a pipelined in-memory op) to 5 s (a stalled commit or a long poll). */
export const requestDurationBucketsSeconds = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
/** One fsync'd commit takes about 0.35-0.9 ms (docs/decisions/012-group-commit.md); a slow disk makes it 100s of ms. */
const commitDurationBucketsSeconds = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
/** Records per commit: 1 (a lone ack) up to a few 1,000-item batches grouped together. */
const commitRecordsBuckets = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 50000];
/** Write sets (requests) grouped into one commit. */
const commitWriteSetsBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** prom-client's default metrics that cost a heap walk per scrape under Bun (createMetrics drops them). */
export const heapSpaceMetricNames = ["nodejs_heap_space_size_total_bytes", "nodejs_heap_space_size_used_bytes", "nodejs_heap_space_size_available_bytes"];

const emptySnapshot: GaugeSnapshot = { items: [], breaker: null, connections: 0, waiters: 0 };

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const topicSeriesMax = options.topicSeriesMax ?? metricsTopicSeriesMax;
  let gaugeSource: GaugeSource = options.gaugeSource ?? (() => emptySnapshot);

  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    // Under Bun, v8.getHeapSpaceStatistics() walks JavaScriptCore's whole heap:
    // about 70-130 ms at 1,000,000 live objects, and a scrape blocks the event
    // loop that long. Its per-space split is V8's anyway; nodejs_heap_size_*
    // (process.memoryUsage, microseconds) stays.
    for (const name of heapSpaceMetricNames) registry.removeSingleMetric(name);
  }

  const buildInfo = new Gauge({
    name: "orq_build_info",
    help: "Always 1; the label carries the running orq version.",
    labelNames: ["version"],
    registers: [registry],
  });
  buildInfo.set({ version: options.version ?? "unknown" }, 1);

  const other = options.otherRequestLabels ?? { ops: [], codes: [] };
  const requests = new RequestMetrics(
    { ops: [...opNames, ...other.ops], unknownOp: unknownOpLabel, codes: [...knownCodes, ...other.codes], unknownCode: "INTERNAL" },
    requestDurationBucketsSeconds,
  );
  const requestMetrics = requests.scrapeTimeMetrics({
    requests: "orq_requests_total",
    requestsHelp: "Requests answered, by op and result code (OK or the protocol error code).",
    duration: "orq_request_duration_seconds",
    durationHelp: "Time from a request's arrival to its reply being queued, long-poll waits included.",
  });
  // The one cast: registerMetric is typed for prom-client's own classes, though the registry only calls get() and reset().
  for (const metric of requestMetrics) registry.registerMetric(metric as unknown as Metric);
  const commits = commitMetrics(registry);
  const refreshGauges = scrapeTimeGauges(registry, topicSeriesMax);
  const refreshStoreRead = storeReadGauges(registry);
  const refreshPassedOver = passedOverCounter(registry);
  const refreshPreferenceDeliveries = preferenceDeliveriesCounter(registry);
  const refreshPostgresCommits = postgresCommitCounters(registry);
  const refreshReadsAhead = shardReadsAheadCounter(registry);
  const refreshFiledAhead = shardsFiledAheadCounter(registry);
  const refreshSchedules = scheduleMetrics(registry);

  return {
    requestDone(op, code, durationMs) {
      requests.record(op, code, durationMs);
    },
    commitObserved: commits.observed,
    commitTotals: commits.totals,
    setGaugeSource(source) {
      gaugeSource = source;
    },
    async render() {
      const snapshot = gaugeSource();
      refreshGauges(snapshot);
      refreshStoreRead(snapshot.storeRead);
      refreshPassedOver(snapshot.passedOver);
      refreshPreferenceDeliveries(snapshot.preferenceDeliveries);
      refreshPostgresCommits(snapshot.postgresCommits);
      refreshReadsAhead(snapshot.shardReadsAhead);
      refreshFiledAhead(snapshot.shardsFiledAhead);
      refreshSchedules(snapshot.schedules);
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

/** The commit histograms and counters on `registry`, with what feeds them (Metrics.commitObserved and commitTotals). */
function commitMetrics(registry: Registry): { observed: Metrics["commitObserved"]; totals: Metrics["commitTotals"] } {
  const commitRecords = new Histogram({
    name: "orq_commit_records",
    help: "Records written per storage commit.",
    buckets: commitRecordsBuckets,
    registers: [registry],
  });
  const commitWriteSets = new Histogram({
    name: "orq_commit_write_sets",
    help: "Write sets (requests) grouped into one storage commit.",
    buckets: commitWriteSetsBuckets,
    registers: [registry],
  });
  const commitDuration = new Histogram({
    name: "orq_commit_duration_seconds",
    help: "Duration of one storage commit, fsync included.",
    buckets: commitDurationBucketsSeconds,
    registers: [registry],
  });
  const commitCounters: Record<keyof CommitTotals, Counter> = {
    commitsTotal: new Counter({ name: "orq_commits_total", help: "Storage commits finished (successful or not).", registers: [registry] }),
    commitFailuresTotal: new Counter({
      name: "orq_commit_failures_total",
      help: "Storage commits in which at least one shard (or the outcome part) failed.",
      registers: [registry],
    }),
    writeSetsRejectedTotal: new Counter({
      name: "orq_write_sets_rejected_total",
      help: "Write sets (requests) refused before any commit: the store's breaker was open or too many writes were waiting.",
      registers: [registry],
    }),
    samplesDroppedTotal: new Counter({
      name: "orq_commit_samples_dropped_total",
      help: "Commits missing from the orq_commit_* histograms because more happened between two polls than the sample ring holds.",
      registers: [registry],
    }),
  };
  const seenTotals = new RunningTotals();
  return {
    observed(records, writeSets, durationMs) {
      commitRecords.observe(records);
      commitWriteSets.observe(writeSets);
      commitDuration.observe(durationMs / 1000);
    },
    totals(totals) {
      for (const key of Object.keys(commitCounters) as Array<keyof CommitTotals>) {
        const growth = seenTotals.growth(key, totals[key]);
        if (growth > 0) commitCounters[key].inc(growth);
      }
    },
  };
}

/** The gauges read at scrape time from the gauge source's snapshot, registered on `registry`; returns what sets them from one snapshot. */
function scrapeTimeGauges(registry: Registry, topicSeriesMax: number): (snapshot: GaugeSnapshot) => void {
  const items = new Gauge({
    name: "orq_items",
    help: "Items by namespace, topic and state, at scrape time.",
    labelNames: ["ns", "topic", "state"],
    registers: [registry],
  });
  const unmatchable = new Gauge({
    name: "orq_items_unmatchable",
    help: "Ready items no worker that asked the topic within the ask window may take, by namespace and topic.",
    labelNames: ["ns", "topic"],
    registers: [registry],
  });
  const topicsTruncated = new Gauge({
    name: "orq_items_topics_truncated",
    help: `1 when more than ${topicSeriesMax} topics exist and the rest are summed into topic "${otherTopicLabel}".`,
    registers: [registry],
  });
  const breaker = new Gauge({
    name: "orq_storage_breaker_state",
    help: "The store's circuit breaker (opened by failing commits only): 1 for the current state, 0 for the others.",
    labelNames: ["state"],
    registers: [registry],
  });
  const connections = new Gauge({
    name: "orq_connections",
    help: "Open client connections.",
    registers: [registry],
  });
  const waiters = new Gauge({
    name: "orq_waiters",
    help: "Dequeues parked in long-poll, waiting for items.",
    registers: [registry],
  });
  const pausedTopics = new Gauge({
    name: "orq_topics_paused",
    help: "Topics paused now (no deliveries until resume or the pause's end).",
    registers: [registry],
  });
  const itemWaitsParked = new Gauge({ name: "orq_item_waits_parked", help: "`wait` requests parked now, waiting for their items to end.", registers: [registry] });
  const itemWaitsAnswered = new Counter({ name: "orq_item_waits_answered_total", help: "`wait` requests answered since start (ended, timed out or released).", registers: [registry] });
  const itemWaitsAnsweredSeen = new RunningTotals();
  const resultsRetained = new Gauge({ name: "orq_results_retained", help: "`ack` results kept with acked outcomes for outcome_retention_ms.", registers: [registry] });
  const resultsRetainedBytes = new Gauge({ name: "orq_results_retained_bytes", help: "Bytes of the `ack` results kept.", registers: [registry] });

  return function refreshGauges(snapshot: GaugeSnapshot): void {
    items.reset();
    unmatchable.reset();
    const exported = new Set<string>();
    let truncated = false;
    // The topic label for (ns, topic): its own for the first topicSeriesMax pairs, then "_other".
    const topicLabel = (ns: string, topic: string): string => {
      const pairKey = `${ns}\u0000${topic}`;
      if (exported.has(pairKey)) return topic;
      if (exported.size < topicSeriesMax) {
        exported.add(pairKey);
        return topic;
      }
      truncated = true;
      return otherTopicLabel;
    };
    for (const entry of snapshot.items) {
      items.inc({ ns: entry.ns, topic: topicLabel(entry.ns, entry.topic), state: entry.state }, entry.count);
    }
    for (const entry of snapshot.unmatchable ?? []) {
      unmatchable.inc({ ns: entry.ns, topic: topicLabel(entry.ns, entry.topic) }, entry.count);
    }
    topicsTruncated.set(truncated ? 1 : 0);

    breaker.reset();
    if (snapshot.breaker !== null) {
      for (const state of breakerStates) breaker.set({ state }, state === snapshot.breaker ? 1 : 0);
    }
    connections.set(snapshot.connections);
    waiters.set(snapshot.waiters);
    pausedTopics.set(snapshot.pausedTopics ?? 0);
    itemWaitsParked.set(snapshot.itemWaits?.parked ?? 0);
    const answeredTotal = snapshot.itemWaits?.answeredTotal ?? 0;
    const answeredGrowth = itemWaitsAnsweredSeen.growth("answered", answeredTotal);
    if (answeredGrowth > 0) itemWaitsAnswered.inc(answeredGrowth);
    resultsRetained.set(snapshot.results?.retained ?? 0);
    resultsRetainedBytes.set(snapshot.results?.retainedBytes ?? 0);
  };
}
