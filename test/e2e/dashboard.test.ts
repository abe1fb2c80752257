// Goal: `orq serve` starts the web dashboard on --ui-port (same host as the
// protocol port), prints its URL before the listening line, links it from
// the HTTP side port's index, and does not start it with --ui-port off; the
// item and matching pages read a real engine's preferences, trace and
// deliveries by fit. The pages themselves are tested in a real browser
// (test/dashboard/browser/).

import { afterEach, describe, expect, test } from "bun:test";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

function lineMatching(pattern: RegExp): RegExpExecArray | null {
  for (const line of server?.stdoutLines ?? []) {
    const match = pattern.exec(line);
    if (match !== null) return match;
  }
  return null;
}

describe("orq serve --ui-port", () => {
  test("prints the dashboard URL, serves it, and the side port's index links it", async () => {
    server = await ServerProcess.start();
    const url = lineMatching(/^orq dashboard on (http:\/\/127\.0\.0\.1:\d+\/)$/)?.[1];
    expect(url).toBeDefined();
    const dashboardLine = server.stdoutLines.findIndex((line) => line.startsWith("orq dashboard on"));
    const listeningLine = server.stdoutLines.findIndex((line) => line.startsWith("orq listening on"));
    expect(dashboardLine).toBeLessThan(listeningLine);
    const page = await fetch(url as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<h1>Overview</h1>");
    // Assets carry an ETag; a revalidation with it is 304 with no body.
    const asset = await fetch(new URL("/assets/app.js", url));
    const etag = asset.headers.get("etag") as string;
    expect(etag).toMatch(/^"[0-9a-z]+"$/);
    const again = await fetch(new URL("/assets/app.js", url), { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const http = lineMatching(/^orq http on (\S+)$/)?.[1];
    const index = await (await fetch(`http://${http}/`)).text();
    expect(index).toContain(`href="${url}"`);
  });

  test("the history sampler records what the stats op reports, for the chart endpoint", async () => {
    server = await ServerProcess.start();
    const url = lineMatching(/^orq dashboard on (\S+)$/)?.[1] as string;
    const c = await RawConnection.connect(server.port);
    try {
      await c.call({ op: "enqueue", ns: "hist", items: [{ topic: "t" }, { topic: "t" }, { topic: "t", delay_ms: 3_600_000 }] });
    } finally {
      c.close();
    }
    // The sampler runs every 5 s on the server's own timer: poll the chart data (bounded) until a sample shows the items.
    const deadlineMs = Date.now() + 30_000;
    let chart: { labels: string[]; data: number[][] } = { labels: [], data: [] };
    while (Date.now() < deadlineMs) {
      chart = (await (await fetch(new URL("/api/history?ns=hist&kind=depths", url))).json()) as typeof chart;
      if ((chart.data[1]?.length ?? 0) > 0) break;
      await Bun.sleep(100);
    }
    expect(chart.labels).toEqual(["ready", "delayed", "waiting", "leased", "dead"]);
    expect(chart.data[1]?.at(-1)).toBe(2);
    expect(chart.data[2]?.at(-1)).toBe(1);
  }, 60_000);

  test("the item page shows prefers and the trace id; the matching page the topic's deliveries by fit and its held items", async () => {
    server = await ServerProcess.start();
    const url = lineMatching(/^orq dashboard on (\S+)$/)?.[1] as string;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const c = await RawConnection.connect(server.port);
    let heldId: string;
    try {
      const prefers = { repo: { in: ["a"], weight: 3 } };
      const enqueued = await c.call({
        op: "enqueue",
        ns: "pref",
        items: [
          { topic: "render", prefers },
          { topic: "render", prefers },
          { topic: "render", requires: { gpu: true }, prefers, prefer_wait_ms: 3_600_000, trace: `00-${traceId}-00f067aa0ba902b7-01` },
        ],
      });
      heldId = (enqueued.ids as string[])[2] as string;
      // A full fit, then a partial one; the third item wants a gpu, which neither worker has.
      for (const repo of ["a", "b"]) {
        const got = await c.call({ op: "dequeue", ns: "pref", topics: [{ topic: "render" }], capabilities: { repo } });
        expect(got.items as unknown[]).toHaveLength(1);
      }
    } finally {
      c.close();
    }
    const item = await (await fetch(new URL(`/item?ns=pref&id=${encodeURIComponent(heldId)}`, url))).text();
    expect(item).toContain(`<code data-trace-id="${traceId}"`);
    expect(item).toContain('<dd id="prefer-wait">3,600,000 ms as ready');
    const matching = await (await fetch(new URL("/matching?ns=pref&topic=render", url))).text();
    expect(matching).toContain('<tr data-fit="full"><td>full</td><td class="num">1</td>');
    expect(matching).toContain('<tr data-fit="partial"><td>partial</td><td class="num">1</td>');
    expect(matching).toContain('<tr data-fit="released"><td>released</td><td class="num">0</td>');
    expect(matching).toContain('<p id="held-items">1 ready item is held');
  });

  test("--ui-port off starts no dashboard; the index says so", async () => {
    server = await ServerProcess.start({ args: ["--ui-port", "off"] });
    expect(lineMatching(/^orq dashboard on/)).toBeNull();
    const http = lineMatching(/^orq http on (\S+)$/)?.[1];
    expect(await (await fetch(`http://${http}/`)).text()).toContain("web dashboard: off");
  });
});
