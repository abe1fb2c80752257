// Goal: createMetrics() counts requests and commits under the documented
// names and labels, pulls gauges from its source at each render, bounds the
// label values clients can influence (op names, topic count), and renders a
// scrape that is valid Prometheus text from its first line to its last.

import { describe, expect, test } from "bun:test";
import {
  heapSpaceMetricNames,
  createMetrics,
  otherTopicLabel,
  type GaugeSnapshot,
} from "../../src/observability/metrics.ts";
import { opNames } from "../../src/protocol/op-names.ts";
import { findSample, parsePrometheusText, type Exposition } from "./prometheus-text.ts";

async function scrape(metrics: ReturnType<typeof createMetrics>): Promise<Exposition> {
  return parsePrometheusText(await metrics.render());
}

function snapshotWithTopics(topicCount: number): GaugeSnapshot {
  const items = [];
  for (let index = 0; index < topicCount; index += 1) {
    items.push({ ns: "billing", topic: `t${index}`, state: "ready" as const, count: 2 });
    items.push({ ns: "billing", topic: `t${index}`, state: "leased" as const, count: 1 });
  }
  return { items, breaker: null, connections: 0, waiters: 0 };
}

describe("createMetrics", () => {
  test("every sample of a full scrape has a declared TYPE", async () => {
    const metrics = createMetrics({ version: "1.2.3" });
    metrics.requestDone("enqueue", "OK", 0.2);
    metrics.commitObserved(10, 2, 0.6);
    const parsed = await scrape(metrics);
    expect(parsed.samples.length).toBeGreaterThan(20);
    for (const sample of parsed.samples) {
      const family = sample.name.replace(/_(bucket|sum|count|total|created)$/, "");
      const declared = parsed.types.has(sample.name) || parsed.types.has(family);
      if (!declared) throw new Error(`sample ${sample.name} has no TYPE line`);
    }
    expect(findSample(parsed, "orq_build_info", { version: "1.2.3" })?.value).toBe(1);
    expect(parsed.types.get("process_cpu_seconds_total")).toBe("counter");
  });

  test("process metrics leave out the heap-space gauges, whose collection walks the whole heap under Bun", async () => {
    const parsed = await scrape(createMetrics({ version: "1.2.3" }));
    expect(parsed.types.get("nodejs_heap_size_used_bytes")).toBe("gauge");
    for (const name of heapSpaceMetricNames) expect(parsed.types.has(name)).toBe(false);
    expect(parsed.samples.filter((sample) => sample.name.startsWith("nodejs_heap_space_"))).toEqual([]);
  });

  test("processMetrics: false leaves only orq_ metrics", async () => {
    const parsed = await scrape(createMetrics({ processMetrics: false }));
    expect(parsed.samples.every((sample) => sample.name.startsWith("orq_"))).toBe(true);
  });

  test("requestDone counts by op and code and observes latency in seconds", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.requestDone("enqueue", "OK", 0.04);
    metrics.requestDone("enqueue", "OK", 3);
    metrics.requestDone("enqueue", "TOO_LARGE", 0.1);
    const parsed = await scrape(metrics);
    expect(findSample(parsed, "orq_requests_total", { op: "enqueue", code: "OK" })?.value).toBe(2);
    expect(findSample(parsed, "orq_requests_total", { op: "enqueue", code: "TOO_LARGE" })?.value).toBe(1);
    expect(findSample(parsed, "orq_request_duration_seconds_count", { op: "enqueue" })?.value).toBe(3);
    // 0.04 ms falls in the first bucket (50 µs); 0.1 ms in the 100 µs one; 3 ms in the 5 ms one.
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "enqueue", le: "0.00005" })?.value).toBe(1);
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "enqueue", le: "0.0001" })?.value).toBe(2);
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "enqueue", le: "0.0025" })?.value).toBe(2);
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "enqueue", le: "0.005" })?.value).toBe(3);
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "enqueue", le: "5" })?.value).toBe(3);
    expect(findSample(parsed, "orq_request_duration_seconds_sum", { op: "enqueue" })?.value).toBeCloseTo(0.00314, 8);
  });

  test("ops outside the contract and unknown codes cannot add series", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.requestDone("drop_tables", "UNKNOWN_OP", 0.1);
    metrics.requestDone("constructor", "UNKNOWN_OP", 0.1);
    metrics.requestDone("ping", "SOMETHING_NEW", 0.1);
    const parsed = await scrape(metrics);
    expect(findSample(parsed, "orq_requests_total", { op: "unknown", code: "UNKNOWN_OP" })?.value).toBe(2);
    expect(findSample(parsed, "orq_requests_total", { op: "ping", code: "INTERNAL" })?.value).toBe(1);
    const ops = new Set(parsed.samples.filter((s) => s.name === "orq_requests_total").map((s) => s.labels.op));
    expect([...ops].sort()).toEqual(["ping", "unknown"]);
  });

  test("every op of the contract is a label of its own", async () => {
    const metrics = createMetrics({ processMetrics: false });
    for (const op of opNames) metrics.requestDone(op, "OK", 0.1);
    const parsed = await scrape(metrics);
    for (const op of opNames) expect(findSample(parsed, "orq_requests_total", { op, code: "OK" })?.value).toBe(1);
  });

  test("commitObserved feeds three histograms", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.commitObserved(1, 1, 0.5);
    metrics.commitObserved(1000, 40, 12);
    const parsed = await scrape(metrics);
    expect(findSample(parsed, "orq_commit_records_count")?.value).toBe(2);
    expect(findSample(parsed, "orq_commit_records_sum")?.value).toBe(1001);
    expect(findSample(parsed, "orq_commit_records_bucket", { le: "1" })?.value).toBe(1);
    expect(findSample(parsed, "orq_commit_write_sets_bucket", { le: "32" })?.value).toBe(1);
    expect(findSample(parsed, "orq_commit_write_sets_bucket", { le: "64" })?.value).toBe(2);
    expect(findSample(parsed, "orq_commit_duration_seconds_bucket", { le: "0.0005" })?.value).toBe(1);
    expect(findSample(parsed, "orq_commit_duration_seconds_bucket", { le: "0.025" })?.value).toBe(2);
  });

  test("gauges come from the source at each render, and vanished series disappear", async () => {
    let snapshot: GaugeSnapshot = {
      items: [
        { ns: "a", topic: 'we"ird\\name\n', state: "ready", count: 5 },
        { ns: "a", topic: "t", state: "dead", count: 1 },
      ],
      breaker: "open",
      connections: 7,
      waiters: 3,
      pausedTopics: 2,
    };
    const metrics = createMetrics({ processMetrics: false });
    metrics.setGaugeSource(() => snapshot);
    let parsed = await scrape(metrics);
    expect(findSample(parsed, "orq_items", { ns: "a", topic: 'we"ird\\name\n', state: "ready" })?.value).toBe(5);
    expect(findSample(parsed, "orq_items", { ns: "a", topic: "t", state: "dead" })?.value).toBe(1);
    expect(findSample(parsed, "orq_storage_breaker_state", { state: "open" })?.value).toBe(1);
    expect(findSample(parsed, "orq_storage_breaker_state", { state: "closed" })?.value).toBe(0);
    expect(findSample(parsed, "orq_storage_breaker_state", { state: "probing" })?.value).toBe(0);
    expect(parsed.samples.filter((s) => s.name === "orq_storage_breaker_state")).toHaveLength(4);
    expect(findSample(parsed, "orq_connections")?.value).toBe(7);
    expect(findSample(parsed, "orq_waiters")?.value).toBe(3);
    expect(findSample(parsed, "orq_topics_paused")?.value).toBe(2);

    snapshot = { items: [{ ns: "a", topic: "t", state: "ready", count: 2 }], breaker: null, connections: 0, waiters: 0 };
    parsed = await scrape(metrics);
    expect(parsed.samples.filter((s) => s.name === "orq_items")).toHaveLength(1);
    expect(findSample(parsed, "orq_storage_breaker_state")).toBeUndefined();
    expect(findSample(parsed, "orq_connections")?.value).toBe(0);
  });

  test.each([
    [4, false],
    [5, false],
    [6, true],
  ])("topicSeriesMax 5 with %i topics: folded into _other = %p", async (topicCount, folded) => {
    const metrics = createMetrics({ processMetrics: false, topicSeriesMax: 5, gaugeSource: () => snapshotWithTopics(topicCount) });
    const parsed = await scrape(metrics);
    const topics = new Set(parsed.samples.filter((s) => s.name === "orq_items").map((s) => s.labels.topic));
    expect(topics.size).toBe(Math.min(topicCount, 5) + (folded ? 1 : 0));
    expect(findSample(parsed, "orq_items_topics_truncated")?.value).toBe(folded ? 1 : 0);
    const other = findSample(parsed, "orq_items", { ns: "billing", topic: otherTopicLabel, state: "ready" });
    expect(other?.value).toBe(folded ? 2 * (topicCount - 5) : undefined);
    // Totals are preserved whether or not folding happened.
    const readyTotal = parsed.samples
      .filter((s) => s.name === "orq_items" && s.labels.state === "ready")
      .reduce((sum, s) => sum + s.value, 0);
    expect(readyTotal).toBe(2 * topicCount);
  });
});
