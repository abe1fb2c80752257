// Goal: RequestMetrics counts into fixed tables and exports exactly what
// prom-client's labelled Counter and Histogram did: a duration on a bucket's
// bound lands in that bucket, out-of-set ops and codes fold into their
// catch-all labels, bad durations count as 0 instead of throwing, pairs never
// seen stay absent, and resetMetrics empties both metrics.

import { describe, expect, test } from "bun:test";
import { Registry, type Metric } from "prom-client";
import { RequestMetrics } from "../../src/observability/request-metrics.ts";
import { findSample, parsePrometheusText } from "./prometheus-text.ts";

const names = { requests: "t_requests_total", requestsHelp: "r", duration: "t_duration_seconds", durationHelp: "d" };

function setUp(): { registry: Registry; metrics: RequestMetrics } {
  const registry = new Registry();
  const metrics = new RequestMetrics({ ops: ["ping", "ack"], unknownOp: "unknown", codes: ["OK", "BAD_REQUEST", "INTERNAL"], unknownCode: "INTERNAL" }, [0.001, 0.01]);
  for (const metric of metrics.scrapeTimeMetrics(names)) registry.registerMetric(metric as unknown as Metric);
  return { registry, metrics };
}

describe("RequestMetrics", () => {
  test("a duration just under, on and just over a bound", async () => {
    const { registry, metrics } = setUp();
    metrics.record("ping", "OK", 0.999);
    metrics.record("ping", "OK", 1);
    metrics.record("ping", "OK", 1.001);
    metrics.record("ping", "OK", 10.001);
    const parsed = parsePrometheusText(await registry.metrics());
    expect(findSample(parsed, "t_duration_seconds_bucket", { op: "ping", le: "0.001" })?.value).toBe(2);
    expect(findSample(parsed, "t_duration_seconds_bucket", { op: "ping", le: "0.01" })?.value).toBe(3);
    expect(findSample(parsed, "t_duration_seconds_bucket", { op: "ping", le: "+Inf" })?.value).toBe(4);
    expect(findSample(parsed, "t_duration_seconds_count", { op: "ping" })?.value).toBe(4);
    expect(findSample(parsed, "t_duration_seconds_sum", { op: "ping" })?.value).toBeCloseTo(0.013001, 9);
    expect(findSample(parsed, "t_requests_total", { op: "ping", code: "OK" })?.value).toBe(4);
    expect(parsed.types.get("t_requests_total")).toBe("counter");
    expect(parsed.types.get("t_duration_seconds")).toBe("histogram");
  });

  test("unknown ops and codes fold; unseen pairs and ops are absent", async () => {
    const { registry, metrics } = setUp();
    metrics.record("__proto__", "OK", 0.1);
    metrics.record("ack", "NEW_CODE", 0.1);
    const parsed = parsePrometheusText(await registry.metrics());
    expect(findSample(parsed, "t_requests_total", { op: "unknown", code: "OK" })?.value).toBe(1);
    expect(findSample(parsed, "t_requests_total", { op: "ack", code: "INTERNAL" })?.value).toBe(1);
    expect(parsed.samples.filter((s) => s.name === "t_requests_total")).toHaveLength(2);
    expect(findSample(parsed, "t_duration_seconds_count", { op: "ping" })).toBeUndefined();
  });

  test("negative, NaN and infinite durations count as 0 s", async () => {
    const { registry, metrics } = setUp();
    metrics.record("ping", "OK", -5);
    metrics.record("ping", "OK", Number.NaN);
    metrics.record("ping", "OK", Number.POSITIVE_INFINITY);
    const parsed = parsePrometheusText(await registry.metrics());
    expect(findSample(parsed, "t_duration_seconds_bucket", { op: "ping", le: "0.001" })?.value).toBe(3);
    expect(findSample(parsed, "t_duration_seconds_sum", { op: "ping" })?.value).toBe(0);
  });

  test("resetMetrics empties both", async () => {
    const { registry, metrics } = setUp();
    metrics.record("ping", "OK", 0.5);
    registry.resetMetrics();
    const parsed = parsePrometheusText(await registry.metrics());
    expect(parsed.samples).toHaveLength(0);
  });
});
