// Goal: the overview marks the namespaces that stats says are kept in memory
// only, and warns in words what a restart loses; a server with none shows
// neither.

import { describe, expect, test } from "bun:test";
import { overviewPage } from "../../src/dashboard/pages/overview.ts";
import type { Html } from "../../src/dashboard/html.ts";
import { pageFixture, type Fields } from "./page-fixture.ts";

function statsWith(namespaces: Record<string, Fields>): Fields {
  return { namespaces, totals: {}, counters: {}, server: {} };
}

const counts = { ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, topics: 1 };

async function overview(namespaces: Record<string, Fields>): Promise<string> {
  const { ctx } = pageFixture("/?ns=shop", { stats: () => statsWith(namespaces) });
  const page = await overviewPage(ctx);
  return (page.live as Html).text;
}

describe("in-memory namespaces on the overview", () => {
  test("a namespace stats marks as memory gets a badge and the restart warning", async () => {
    const text = await overview({ shop: counts, scratch: { ...counts, durability: "memory" } });
    expect(text).toContain('scratch</a> <span class="badge warn" title="kept in memory only">in memory</span>');
    expect(text).toContain('<p class="bad" id="memory-namespaces">In memory only, never written to disk: scratch. A restart starts it empty');
    expect(text).not.toContain('shop</a> <span class="badge');
  });

  test("no namespace in memory: no badge, no warning", async () => {
    const text = await overview({ shop: counts });
    expect(text).not.toContain("in memory");
    expect(text).not.toContain("memory-namespaces");
  });
});
