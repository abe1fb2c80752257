// Goal: keep the locality scenario (bench/load/locality.ts) honest at a tiny
// size against real orq processes: every item it enqueues is delivered and
// acked once, the share of deliveries it calls full fit agrees with the
// server's own count by fit (stats engine.preference_deliveries), and the
// pass without prefers has none. The worker's payload byte is checked on a
// hand-made item. No timing is asserted.

import { afterAll, describe, expect, test } from "bun:test";
import { ackHead } from "../../bench/load/jupiter-worker.ts";
import { LOCALITY_TOPIC, runLocalityPair, type LocalityPass } from "../../bench/load/locality.ts";
import { acquireTagged } from "../../bench/load/locality-worker.ts";
import { OrqConn, makeTemplate } from "../../bench/load/orq-conn.ts";
import { NAMESPACE } from "../../bench/load/systems.ts";
import { ServerProcess } from "../support/server-process.ts";

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.cleanup();
});

async function startServer(): Promise<ServerProcess> {
  const server = await ServerProcess.start();
  servers.push(server);
  return server;
}

function expectDeliveredOnce(pass: LocalityPass): void {
  expect(pass.enqueued).toBeGreaterThan(0);
  expect(pass.delivered).toBe(pass.enqueued);
  expect(pass.redelivered).toBe(0);
  expect(pass.acquisitions).toBeGreaterThan(0);
  expect(pass.fullFitShare).toBeGreaterThanOrEqual(0);
  expect(pass.fullFitShare).toBeLessThanOrEqual(1);
  expect(pass.fullFit).toBe(Math.round(pass.fullFitShare * pass.acquisitions));
}

describe("the locality worker", () => {
  test("reads the delivery's first payload byte and attempt, acks it, and says when nothing came", async () => {
    const server = await startServer();
    const conn = await OrqConn.connect(server.host, server.port);
    try {
      const enqueued = await conn.call({ op: "enqueue", ns: NAMESPACE, items: [{ topic: LOCALITY_TOPIC, payload: new Uint8Array([7, 1, 2]), prefers: { repo: "r7" } }] });
      const dequeue = makeTemplate({ op: "dequeue", ns: NAMESPACE, topics: [{ topic: LOCALITY_TOPIC, count: 1 }], capabilities: { repo: "r3" }, wait_ms: 0 });
      expect(await acquireTagged(conn, dequeue, ackHead(NAMESPACE))).toEqual({ repo: 7, attempt: 1 });
      expect(await acquireTagged(conn, dequeue, ackHead(NAMESPACE))).toBeNull();
      // The worker acked what it took.
      const states = await conn.call({ op: "get", ns: NAMESPACE, ids: enqueued.ids as string[] });
      expect((states.items as Array<{ outcome?: string }>)[0]?.outcome).toBe("acked");
    } finally {
      conn.close();
    }
  });
});

describe("runLocality at a tiny size", () => {
  test(
    "with prefers and without, alternated, each on its own server: every item delivered once; the server counted every preferring delivery by fit; the medians are passes run",
    async () => {
      const before = servers.length;
      const figures = await runLocalityPair(startServer, { backlog: 200, durationS: 0.3 }, 2);
      expect(figures.prefers).toMatchObject({ prefers: true, preferWaitMs: 50, kinds: 10, backlog: 200 });
      expect(figures.plain).toMatchObject({ prefers: false, preferWaitMs: 0, kinds: 10, backlog: 200 });
      expectDeliveredOnce(figures.prefers);
      expectDeliveredOnce(figures.plain);
      const fit = figures.prefers.serverFit ?? {};
      expect(Object.values(fit).reduce((sum, n) => sum + n, 0)).toBe(figures.prefers.delivered);
      // The window's full fits are among the server's: the drain after it may add more.
      expect(fit.full ?? 0).toBeGreaterThanOrEqual(figures.prefers.fullFit);
      expect(Object.values(figures.plain.serverFit ?? {}).reduce((sum, n) => sum + n, 0)).toBe(0);
      // Each kind's figures are the median of its passes (of two, the faster), and every server was stopped.
      const pairs = figures.pairs ?? [];
      expect(pairs.length).toBe(2);
      expect(figures.prefers.acquisitionsPerS).toBe(Math.max(...pairs.map((p) => p.prefersPerS)));
      expect(figures.plain.acquisitionsPerS).toBe(Math.max(...pairs.map((p) => p.plainPerS)));
      expect(servers.slice(before).map((server) => server.running)).toEqual([false, false, false, false]);
    },
    60_000,
  );
});
