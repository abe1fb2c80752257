// Goal: a namespace's enqueue quota is cluster-wide, as the contract's
// "Cluster mode" says, by token leasing (docs/CLUSTER.md, "Quotas across
// nodes"): a client that talks to one node of three gets the whole quota
// (not a third), and clients spread over the nodes, across a join that moves
// shards and rebuilds every node's engine, never get more in total than the
// quota's burst plus its refill. Three real nodes on one real PostgreSQL;
// enqueue_per_minute 600 (10 a second). Each client enqueues until its node
// says the cluster's bucket is empty (a RATE_LIMITED hint longer than the
// one given while a draw is under way); nothing asserts a timing: the run's
// measured length only widens the upper bound by the refill it allows.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import type { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { clusterLimits } from "../../src/limits.ts";
import { ClusterHarness, clusterPerTest } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "metered";
const perMinute = 600;
const config = { namespaces: { [ns]: { enqueue_per_minute: perMinute } } };
const batch = Array.from({ length: 5 }, () => ({ topic: "t" }));
/** Requests one client sends at most before the test fails (the bucket is empty long before). */
const attemptsMax = 5_000;

/** Enqueue batches through one node until it says the cluster's bucket is empty; the items admitted. */
async function drain(client: OrqClient): Promise<number> {
  let admitted = 0;
  for (let attempt = 0; attempt < attemptsMax; attempt++) {
    try {
      admitted += (await client.enqueue(ns, batch)).length;
    } catch (error) {
      if (!(error instanceof OrqError) || (error.code !== "RATE_LIMITED" && error.code !== "UNAVAILABLE")) throw error;
      const hintMs = error.details.retryAfterMs ?? 0;
      // A longer hint is the refill of an empty bucket: the quota is spent.
      if (error.code === "RATE_LIMITED" && hintMs > clusterLimits.quotaDrawRetryAfterMs) return admitted;
      await new Promise((resolve) => setTimeout(resolve, hintMs));
    }
  }
  throw new Error(`the quota never ran out in ${attemptsMax} requests (${admitted} admitted)`);
}

/** The most the cluster may admit `elapsedMs` after (or less) its bucket was made: the burst plus the refill. */
function bound(elapsedMs: number): number {
  return perMinute + (elapsedMs * perMinute) / 60_000;
}

describe.skipIf(!postgresAvailable())("namespace quotas across cluster nodes", () => {
  const clusters = clusterPerTest();

  test("a client of one node of three gets the whole burst, not a third", async () => {
    const startedMs = performance.now(); // before any node drew: the bucket is younger than this
    const cluster = await clusters.start({ label: "quota-one", nodes: 3, shards: 6, leaseMs: 60_000, config });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "three nodes share the shards");
    const admitted = await drain(await cluster.client(1));
    const elapsedMs = performance.now() - startedMs;
    // All but the floors the two idle nodes keep (3 tokens each) and a batch's rounding.
    expect(admitted).toBeGreaterThanOrEqual(perMinute * 0.9);
    expect(admitted).toBeLessThanOrEqual(bound(elapsedMs));
    // The other nodes find it spent too.
    const other = await cluster.client(2);
    const refused = await other.enqueue(ns, Array.from({ length: 50 }, () => ({ topic: "t" }))).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OrqError);
    expect((refused as OrqError).code).toBe("RATE_LIMITED");
  });

  test("clients spread over the nodes, across a join that rebuilds every engine, never get more than the burst plus the refill", async () => {
    const startedMs = performance.now();
    const cluster = await clusters.start({ label: "quota-spread", nodes: 3, shards: 8, leaseMs: 60_000, config });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 8), "three nodes share the shards");
    const clients = [await cluster.client(0), await cluster.client(1), await cluster.client(2)];
    const first = (await Promise.all(clients.map((client) => drain(client)))).reduce((sum, n) => sum + n, 0);
    expect(first).toBeGreaterThanOrEqual(perMinute * 0.9);
    expect(first).toBeLessThanOrEqual(bound(performance.now() - startedMs));

    // A fourth node joins: two nodes give it a shard each (3, 3, 2 become 2 each), and rebuild their engines.
    await cluster.addNode();
    const fair = ClusterHarness.balanced(["n0", "n1", "n2", "n3"], 8);
    await cluster.waitFor(0, (map) => fair(map) && map.owners.filter((owner) => owner === "n3").length === 2, "four nodes share the shards");
    clients.push(await cluster.client(3));
    const second = (await Promise.all(clients.map((client) => drain(client)))).reduce((sum, n) => sum + n, 0);
    const elapsedMs = performance.now() - startedMs;
    // A rebuilt engine does not start with a full bucket: only the refill since came on top.
    expect(first + second).toBeLessThanOrEqual(bound(elapsedMs));
  });
});
