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
        breaker: "half_open",
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
    expect(findSample(parsed, "orq_storage_breaker_state", { state: "half_open" })?.value).toBe(1);
    expect(findSample(parsed, "orq_requests_total", { op: "dequeue", code: "OK" })?.value).toBe(1);
    expect(findSample(parsed, "orq_connections")?.value).toBe(2);
  });

  test("/ is an HTML index linking /healthz, /readyz, /metrics and any extra page, escaped", async () => {
    handle = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetrics(),
      isReady: () => true,
      logError: () => {},
      indexLinks: () => [{ path: "/dashboard", description: "queues <live>" }, { path: null, description: "web dashboard: off" }],
    });
    const response = await fetch(`http://127.0.0.1:${handle.port}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await response.text();
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual(["/healthz", "/readyz", "/metrics", "/dashboard"]);
    expect(html).toContain("queues &lt;live&gt;");
    expect((await fetch(`http://127.0.0.1:${handle.port}/`, { method: "POST" })).status).toBe(405);
    expect(html).toContain("<li>web dashboard: off</li>");
  });

  test("unknown paths are 404 and non-GET methods 405", async () => {
    const base = await start(() => true);
    expect((await fetch(`${base}/index.html`)).status).toBe(404);
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
        return { items: [], breaker: null, connections: 0, waiters: 0 };
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
