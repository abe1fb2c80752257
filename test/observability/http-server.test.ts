// Goal: the HTTP side port answers liveness, readiness (flipping with
// isReady) and a parseable Prometheus scrape on a port chosen by the OS, and
// rejects everything else; a failing gauge source fails one scrape, not the port.

import { afterEach, describe, expect, test } from "bun:test";
import { startHttpServer, type HttpServerHandle } from "../../src/observability/http-server.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { findSample, parsePrometheusText } from "./prometheus-text.ts";

let handle: HttpServerHandle | undefined;

afterEach(async () => {
  await handle?.stop();
  handle = undefined;
});

async function start(isReady: () => boolean, metrics = createMetrics()): Promise<string> {
  handle = await startHttpServer({ host: "127.0.0.1", port: 0, metrics, isReady, logError: () => {} });
  expect(handle.port).toBeGreaterThan(0);
  return `http://127.0.0.1:${handle.port}`;
}

describe("startHttpServer", () => {
  test("/healthz is 200 ok whether or not the server is ready", async () => {
    const base = await start(() => false);
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok\n");
  });

  test("/readyz flips from 503 to 200 and back with isReady()", async () => {
    let ready = false;
    const base = await start(() => ready);
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    ready = true;
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ready\n");
    ready = false; // draining
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
  });

  test("/metrics is Prometheus text 0.0.4 that parses line by line", async () => {
    const metrics = createMetrics({
      version: "0.1.0",
      gaugeSource: () => ({
        items: [{ ns: "default", topic: "emails", state: "ready", count: 12 }],
        breakers: [{ shard: 3, state: "half_open" }],
        connections: 2,
        waiters: 1,
      }),
    });
    metrics.requestDone("dequeue", "OK", 1.5);
    const base = await start(() => true, metrics);
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const parsed = parsePrometheusText(await response.text());
    expect(findSample(parsed, "orq_items", { ns: "default", topic: "emails", state: "ready" })?.value).toBe(12);
    expect(findSample(parsed, "orq_shard_breaker_state", { shard: "3", state: "half_open" })?.value).toBe(1);
    expect(findSample(parsed, "orq_requests_total", { op: "dequeue", code: "OK" })?.value).toBe(1);
    expect(findSample(parsed, "orq_connections")?.value).toBe(2);
  });

  test("the index links the probes, and the dashboard when it is on", async () => {
    const base = await start(() => true);
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    const text = await index.text();
    expect(text).toContain('href="/metrics"');
    expect(text).toContain("web dashboard: off");
  });

  test("unknown paths are 404 and non-GET methods 405", async () => {
    const base = await start(() => true);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/metrics/extra`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${base}/healthz`, { method: "HEAD" })).status).toBe(200);
  });

  test("a throwing gauge source fails that scrape with 500 and the port keeps serving", async () => {
    let failing = true;
    const metrics = createMetrics({
      processMetrics: false,
      gaugeSource: () => {
        if (failing) throw new Error("engine snapshot failed");
        return { items: [], breakers: [], connections: 0, waiters: 0 };
      },
    });
    const base = await start(() => true, metrics);
    expect((await fetch(`${base}/metrics`)).status).toBe(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    failing = false;
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  test("stop() releases the port", async () => {
    const base = await start(() => true);
    await handle?.stop();
    handle = undefined;
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
