// Goal: a cluster node's /metrics shows what its commits cost PostgreSQL
// (orq_postgres_*: commits, round trips, rows written, record bytes), the
// capacity model's inputs (docs/CLUSTER.md, "Capacity"), and that they grow
// with work; and that a node taking over a SIGKILLed node's shards read them
// ahead while their lease ran out, filed them into its engine then, and kept
// those reads and finished those copies at the claim (nothing changed),
// serving every item the dead node held. Real nodes on a real PostgreSQL;
// skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1). Counts only, no timings.

import { describe, expect, test } from "bun:test";
import { findSample, parsePrometheusText } from "../observability/prometheus-text.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";
import type { ServerProcess } from "../support/server-process.ts";

function httpBase(node: ServerProcess): string {
  const line = node.stdoutLines.find((l) => l.startsWith("orq http on "));
  const match = line === undefined ? null : /^orq http on (.+):(\d+)$/.exec(line);
  if (match === null) throw new Error(`no http line in stdout: ${node.stdoutLines.join("\n")}`);
  return `http://${match[1]}:${match[2]}`;
}

async function postgresCounts(node: ServerProcess): Promise<Record<string, number>> {
  const exposition = parsePrometheusText(await (await fetch(`${httpBase(node)}/metrics`)).text());
  const out: Record<string, number> = {};
  for (const name of ["orq_postgres_commits_total", "orq_postgres_round_trips_total", "orq_postgres_row_writes_total", "orq_postgres_record_bytes_total"]) {
    out[name] = findSample(exposition, name, {})?.value ?? -1;
  }
  return out;
}

describe.skipIf(!postgresAvailable())("a cluster node's PostgreSQL commit counters", () => {
  const clusters = clusterPerTest();

  test("count commits, round trips, rows and bytes, and grow as items are enqueued, delivered and acked", async () => {
    const cluster = await clusters.start({ label: "metrics", nodes: 1, shards: 2 });
    const node = cluster.nodes[0] as ServerProcess;
    const client = await cluster.client(0);
    const before = await postgresCounts(node);
    for (const value of Object.values(before)) expect(value).toBeGreaterThanOrEqual(0);
    const items = Array.from({ length: 50 }, (_, i) => ({ topic: "jobs", payload: new TextEncoder().encode(`item ${i}`) }));
    await retrying(() => client.enqueue("default", items));
    let delivered = 0;
    while (delivered < items.length) {
      const got = await client.dequeue("default", { topics: [{ topic: "jobs", count: 50 }] });
      if (got.length > 0) await client.ack("default", got.map((d) => d.receipt));
      delivered += got.length;
    }
    const after = await postgresCounts(node);
    expect(after.orq_postgres_commits_total).toBeGreaterThan(before.orq_postgres_commits_total as number);
    expect(after.orq_postgres_round_trips_total).toBeGreaterThanOrEqual(after.orq_postgres_commits_total as number);
    // Each item is inserted, leased (at least once written) and deleted: at least two row writes of its own.
    expect((after.orq_postgres_row_writes_total as number) - (before.orq_postgres_row_writes_total as number)).toBeGreaterThanOrEqual(2 * items.length);
    expect(after.orq_postgres_record_bytes_total).toBeGreaterThan(before.orq_postgres_record_bytes_total as number);
  });

  test("a takeover after SIGKILL reads the dead node's shards ahead and keeps the reads; every item is served", async () => {
    // A 5 s lease: renewed every second, so its shards fall silent (two renewals missed) with up to 3 s of lease left.
    const cluster = await clusters.start({ label: "readahead", nodes: 2, shards: 4, leaseMs: 5_000 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 4), "balanced");
    const c1 = await cluster.client(1);
    const ids = await retrying(() => c1.enqueue("default", Array.from({ length: 40 }, (_, i) => ({ topic: "jobs", payload: new TextEncoder().encode(`item ${i}`) }))));
    await cluster.nodes[1]!.stop("SIGKILL");
    await cluster.waitFor(0, ClusterHarness.balanced(["n0"], 4), "n0 owns every shard");
    const c0 = await cluster.client(0);
    const seen = new Set<string>();
    while (seen.size < ids.length) {
      const got = await retrying(() => c0.dequeue("default", { topics: [{ topic: "jobs", count: 40 }], waitMs: 200 }));
      for (const d of got) seen.add(d.id);
      if (got.length > 0) await retrying(() => c0.ack("default", got.map((d) => d.receipt)));
    }
    expect([...seen].sort()).toEqual([...ids].sort());
    // Both shards read ahead, then kept once adopted (the adoption may still be finishing after the map names n0).
    const node = cluster.nodes[0] as ServerProcess;
    const reads = async () => {
      const exposition = parsePrometheusText(await (await fetch(`${httpBase(node)}/metrics`)).text());
      const count = (result: string) => findSample(exposition, "orq_cluster_shard_reads_ahead_total", { result })?.value ?? 0;
      return { exposition, adopted: count("kept") + count("read_again") };
    };
    let { exposition, adopted } = await reads();
    for (let look = 0; adopted < 2 && look < 100; look++) {
      await Bun.sleep(100);
      ({ exposition, adopted } = await reads());
    }
    expect(node.stderrLines.filter((line) => line.includes('"shard read ahead"')).length).toBe(2);
    expect(findSample(exposition, "orq_cluster_shard_reads_ahead_total", { result: "kept" })?.value ?? 0).toBe(2);
    expect(findSample(exposition, "orq_cluster_shard_reads_ahead_total", { result: "read_again" })?.value ?? 0).toBe(0);
    // Each read was filed into the engine as it came in (a pass right after the read; the claim waits for the lease's end), and finished at the claim.
    expect(findSample(exposition, "orq_cluster_shards_filed_ahead_total", { result: "finished" })?.value ?? 0).toBe(2);
    expect(findSample(exposition, "orq_cluster_shards_filed_ahead_total", { result: "dropped" })?.value ?? 0).toBe(0);
  });
});
