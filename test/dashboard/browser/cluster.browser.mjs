// Goal: the cluster banner in a real browser. Two real orq nodes on a real
// PostgreSQL (test/support/cluster-fixture.ts, run under bun since it starts
// PostgreSQL with the bun helpers; no token, loopback): node A's overview
// shows the banner with this node, the map version, both nodes each owning
// half of the shards and none without an owner, and loads with no console,
// CSP or page error. Skipped without chromium or PostgreSQL.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { chromiumAvailable, launchBrowser, repoRoot, waitFor, watchedPage } from "./support.mjs";

const skip = chromiumAvailable() ? false : "chromium is not installed (/usr/bin/chromium)";

/** Starts the fixture (2 nodes, 4 shards, a long lease so the shards stay put) and reads its one JSON line. */
async function startCluster() {
  const child = spawn(join(repoRoot, "node_modules/.bin/bun"), [join(repoRoot, "test/support/cluster-fixture.ts"), "2", "4", "60000"], { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((done) => child.once("exit", done));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((done, fail) => {
    lines.once("line", done);
    child.once("exit", (code) => fail(new Error(`the cluster fixture exited with ${code} before starting`)));
  });
  lines.close();
  return { ...JSON.parse(first), stop: async () => (child.stdin.end(), await exited) };
}

describe("the cluster banner, two nodes, no token (loopback)", { skip }, () => {
  let cluster;
  let browser;

  before(async () => {
    cluster = await startCluster();
    if (cluster.skip === undefined) browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await cluster?.stop();
  });

  test("node A's overview shows both nodes, each owning two shards, and no shard without an owner", async (t) => {
    if (cluster.skip !== undefined) return t.skip(cluster.skip);
    const [a] = cluster.nodes;
    assert.ok(a.ui, "node A prints its dashboard URL");
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    // The second node's shards arrive within the lease's rebalance: reload until the banner shows them.
    await waitFor("both nodes in the banner, two shards each", async () => {
      await page.goto(a.ui);
      const counts = await page.$$eval("#cluster-nodes [data-shard-count]", (cells) => cells.map((cell) => cell.dataset.shardCount));
      return counts.length === 2 && counts.every((n) => n === "2");
    }, { timeoutMs: 30_000, intervalMs: 200 });
    assert.equal(await page.textContent("#cluster-banner [data-node-id]"), "n0");
    assert.match(await page.textContent("#cluster-banner [data-map-version]"), /^\d+$/);
    assert.equal(await page.getAttribute("#unowned-shards", "data-unowned"), "");
    assert.deepEqual(await page.$$eval("#cluster-nodes tr[data-node]", (rows) => rows.map((row) => row.dataset.node)), ["n0", "n1"]);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
