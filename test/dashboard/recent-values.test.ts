// Goal: the overview's server panel shows the LMDB store's ring of recent
// items' payloads (decision 044): what it holds of its size and the share of
// deliveries it served; a server without one (cluster mode, --store memory,
// --recent-values-mb 0) shows no such row.

import { describe, expect, test } from "bun:test";
import type { Html } from "../../src/dashboard/html.ts";
import type { ServerPanel } from "../../src/dashboard/page-context.ts";
import { overviewPage } from "../../src/dashboard/pages/overview.ts";
import { pageFixture } from "./page-fixture.ts";

async function overview(recentValues: ServerPanel["recentValues"]): Promise<string> {
  const stats = () => ({ namespaces: {}, totals: {}, counters: {}, server: {} });
  const { ctx } = pageFixture("/?ns=shop", { stats }, { recentValues });
  return ((await overviewPage(ctx)).live as Html).text;
}

describe("the ring of recent values on the overview", () => {
  test("bytes held of the ring's size, and the share of deliveries read from memory", async () => {
    const text = await overview({ hits: 930, misses: 70, bytes: 16 * 1024 * 1024, ringBytes: 32 * 1024 * 1024 });
    expect(text).toContain('<dd id="recent-values">16.0 MiB of 32.0 MiB; 93.0% of 1,000 deliveries read from memory');
  });

  test("before any delivery it says so; without a ring there is no row", async () => {
    expect(await overview({ hits: 0, misses: 0, bytes: 0, ringBytes: 1024 * 1024 })).toContain("0.0 MiB of 1.0 MiB; no delivery yet");
    expect(await overview(null)).not.toContain("recent-values");
  });
});
