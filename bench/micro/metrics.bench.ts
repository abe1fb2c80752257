// The metrics hook every answered request pays: `Metrics.requestDone(op,
// code, durationMs)`, against prom-client's labelled `Counter.inc({op,
// code})` plus `Histogram.observe({op}, seconds)`, which hash the label
// object into a string and allocate on every call
// (docs/decisions/021-request-metrics.md), and what a scrape costs with
// every (op, code) series present.
//
// Expected on the 2-core build machine (Bun 1.4.5): the prom-client path
// about 0.53 µs per request; requestDone about 32 ns (two Map lookups, a
// bucket scan over 16 bounds, four typed-array writes, no allocation), about
// 16x less; a render with every request series of 4 ops about 0.1 ms, paid
// once per scrape.
// Run: ./node_modules/.bin/bun bench/micro/metrics.bench.ts

import { bench, do_not_optimize, group, run, summary } from "mitata";
import { Counter, Histogram, Registry } from "prom-client";
import { createMetrics, requestDurationBucketsSeconds } from "../../src/observability/metrics.ts";

const ops = ["enqueue", "dequeue", "ack", "ping"] as const;
const durationsMs = [0.03, 0.08, 0.2, 0.6, 1.4, 3, 12];

const metrics = createMetrics({ processMetrics: false });

const registry = new Registry();
const promRequests = new Counter({ name: "req_total", help: "h", labelNames: ["op", "code"], registers: [registry] });
const promDuration = new Histogram({
  name: "req_seconds",
  help: "h",
  labelNames: ["op"],
  buckets: requestDurationBucketsSeconds,
  registers: [registry],
});

let turn = 0;
summary(() => {
  group("one answered request", () => {
    bench("prom-client labelled inc + observe (before)", () => {
      turn += 1;
      const op = ops[turn & 3] ?? "ping";
      promRequests.inc({ op, code: "OK" });
      promDuration.observe({ op }, (durationsMs[turn % 7] ?? 1) / 1000);
    });
    bench("Metrics.requestDone (now)", () => {
      turn += 1;
      metrics.requestDone(ops[turn & 3] ?? "ping", "OK", durationsMs[turn % 7] ?? 1);
    });
  });
});

group("scrape", () => {
  bench("render, request metrics of 4 ops present", async () => do_not_optimize(await metrics.render()));
});

await run();
