// Goal: a real `orq serve` wires its HTTP side port: the bound port is
// printed, /healthz and /readyz answer 200, and a /metrics scrape (valid
// Prometheus text from first line to last) reflects what clients did: request
// counters by op and code, item gauges by namespace, topic and state, commit
// histograms, connections, parked waiters and the store breaker's one-hot series.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { findSample, parsePrometheusText, type Exposition } from "../observability/prometheus-text.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;
let base: string;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--shards", "3"] });
  base = httpBase(server);
});

afterAll(async () => {
  await server?.cleanup();
});

function httpBase(process: ServerProcess): string {
  const line = process.stdoutLines.find((l) => l.startsWith("orq http on "));
  const match = line === undefined ? null : /^orq http on (.+):(\d+)$/.exec(line);
  if (match === null) throw new Error(`no http line in stdout: ${process.stdoutLines.join("\n")}`);
  return `http://${match[1]}:${match[2]}`;
}

async function scrape(): Promise<Exposition> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parsePrometheusText(await response.text());
}

function value(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return findSample(exposition, name, labels)?.value;
}

describe("orq serve HTTP side port", () => {
  test("/healthz and /readyz answer 200 once the server listens", async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("ok\n");
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe("ready\n");
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  test("the started log line carries the bound http port, not 0", () => {
    const started = server.stderrLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "started");
    expect(started?.http_port).toBe(Number(new URL(base).port));
  });

  test("a scrape reflects requests, items, commits, connections and waiters", async () => {
    const client = await OrqClient.connect({ port: server.port });
    const watcher = await OrqClient.connect({ port: server.port });
    try {
      await client.enqueue("shop", [
        { topic: "emails", payload: "a" },
        { topic: "emails", payload: "b" },
        { topic: "emails", payload: "c", delayMs: 3_600_000 },
      ]);
      await client.enqueue("billing", [{ topic: "invoices", payload: "x" }]);
      const [first] = await client.dequeue("shop", { topics: [{ topic: "emails", count: 1 }], leaseMs: 60_000 });
      expect(first).toBeDefined();
      const [second] = await client.dequeue("shop", { topics: [{ topic: "emails", count: 1 }], leaseMs: 60_000 });
      await client.ack("shop", [second!.receipt]);
      await expect(client.enqueue("shop", [{ topic: "" }])).rejects.toThrow("BAD_REQUEST");
      // A parked long-poll on an empty topic, counted by orq_waiters while it waits.
      const parked = watcher.dequeue("shop", { topics: [{ topic: "idle" }], waitMs: 60_000 });

      let parsed = await scrape();
      for (let tries = 0; value(parsed, "orq_waiters") !== 1 && tries < 50; tries++) parsed = await scrape();

      expect(value(parsed, "orq_requests_total", { op: "enqueue", code: "OK" })).toBe(2);
      expect(value(parsed, "orq_requests_total", { op: "enqueue", code: "BAD_REQUEST" })).toBe(1);
      expect(value(parsed, "orq_requests_total", { op: "dequeue", code: "OK" })).toBe(2);
      expect(value(parsed, "orq_requests_total", { op: "ack", code: "OK" })).toBe(1);
      expect(value(parsed, "orq_requests_total", { op: "hello", code: "OK" })).toBe(2);
      expect(value(parsed, "orq_request_duration_seconds_count", { op: "enqueue" })).toBe(3);

      expect(value(parsed, "orq_items", { ns: "shop", topic: "emails", state: "leased" })).toBe(1);
      expect(value(parsed, "orq_items", { ns: "shop", topic: "emails", state: "delayed" })).toBe(1);
      expect(value(parsed, "orq_items", { ns: "shop", topic: "emails", state: "ready" })).toBe(0);
      expect(value(parsed, "orq_items", { ns: "billing", topic: "invoices", state: "ready" })).toBe(1);
      expect(value(parsed, "orq_items_topics_truncated")).toBe(0);

      expect(value(parsed, "orq_connections")).toBe(2);
      expect(value(parsed, "orq_waiters")).toBe(1);

      // Two enqueues, two leases and an ack were each committed (possibly grouped).
      const commits = value(parsed, "orq_commits_total") ?? 0;
      expect(commits).toBeGreaterThanOrEqual(1);
      expect(value(parsed, "orq_commit_duration_seconds_count")).toBe(commits);
      expect(value(parsed, "orq_commit_records_sum")).toBeGreaterThanOrEqual(4);
      expect(value(parsed, "orq_commit_failures_total")).toBe(0);

      // One breaker for the store (one LMDB transaction covers every shard), closed on a healthy disk.
      expect(value(parsed, "orq_storage_breaker_state", { state: "closed" })).toBe(1);
      expect(value(parsed, "orq_storage_breaker_state", { state: "open" })).toBe(0);
      expect(value(parsed, "orq_shard_breaker_state", { shard: "0", state: "closed" })).toBeUndefined();
      expect(parsed.types.get("process_cpu_seconds_total")).toBe("counter");

      await client.enqueue("shop", [{ topic: "idle", payload: "wake" }]);
      expect((await parked).length).toBe(1);
    } finally {
      await client.close();
      await watcher.close();
    }
  });

  test("the delivery prefetch's keys, the store map's resident bytes and the ring of recent values", async () => {
    const client = await OrqClient.connect({ port: server.port });
    try {
      const before = value(await scrape(), "orq_delivery_prefetch_keys_total") ?? 0;
      // Twenty items over three shards: a dequeue of ten (at least deliveryPrefetch.dequeueCountMin) takes from each shard's heap and asks for the next ones.
      await client.enqueue("prefetch", Array.from({ length: 20 }, (_, i) => ({ topic: "t", priority: i % 3, payload: `p${i}` })));
      const taken = await client.dequeue("prefetch", { topics: [{ topic: "t", count: 10 }] });
      expect(taken.length).toBe(10);
      const parsed = await scrape();
      const prefetched = (value(parsed, "orq_delivery_prefetch_keys_total") ?? 0) - before;
      // The ten left are the most the heaps can still give.
      expect(prefetched).toBeGreaterThan(0);
      expect(prefetched).toBeLessThanOrEqual(10);
      expect(parsed.types.get("orq_store_map_resident_bytes")).toBe("gauge");
      // The deliveries read their items from the map: some of it is resident.
      expect(value(parsed, "orq_store_map_resident_bytes")).toBeGreaterThan(0);
      // Just committed, the ten items delivered were read from the ring of recent values (decision 044), not the map.
      expect(parsed.types.get("orq_store_recent_value_reads_total")).toBe("counter");
      expect(value(parsed, "orq_store_recent_value_reads_total", { result: "hit" })).toBeGreaterThanOrEqual(10);
      expect(value(parsed, "orq_store_recent_values_bytes")).toBeGreaterThanOrEqual(20 * 16);
      await client.ack("prefetch", taken.map((d) => d.receipt));
    } finally {
      await client.close();
    }
  });
});
