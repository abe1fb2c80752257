// Goal: on three real nodes over one PostgreSQL, exactly one node fires a
// schedule and the tick count stays exact across a failover. The schedule
// lives on shard fnv1a32(ns 0 name) mod shards: another node answers
// `schedule` MOVED (nothing done), its owner fires it, and every tick's item
// lands on that shard. The owner is SIGKILLed mid-ticking; a survivor takes
// the shard over and goes on ticking. Afterwards: no tick_at_ms has two
// items, consecutive ticks are one period apart except across the failover
// (catch_up "one": one item for the latest tick missed), ticks go on after
// it, and the new owner's `schedules` shows the last tick and its item.
// A second handover (SIGTERM) of the new owner keeps the same rules. The
// CLI sent to any node reaches the owner for `schedule` and `unschedule`
// (following MOVED), and `schedules` at any node lists every node's, by name
// (read from the database), in pages.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import type { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { shardOfSchedule } from "../../src/protocol/key-shard.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { bunPath, mainPath } from "../support/server-process.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "default";
const shards = 6;
const name = "heartbeat";
const topic = "beats";
/** A schedule whose item names no group lives on its name's shard. */
const ungrouped = { topic, group: null };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The node index that owns `shard` in `owners` (node ids are n<index>). */
function indexOf(owners: Array<string | null>, shard: number): number {
  const owner = owners[shard];
  if (owner === null || owner === undefined) throw new Error(`shard ${shard} has no owner`);
  return Number(owner.slice(1));
}

/** The topic's items on the owner's shards: each one's tick (from its key) and id. */
async function ticks(client: OrqClient): Promise<Array<{ tickAtMs: number; id: string }>> {
  const reply = await retrying(() => client.request("list", { ns, topic, limit: 1000 }));
  return (reply.items as Array<{ id: string; key?: string }>)
    .map((item) => ({ tickAtMs: Number(/^schedule:heartbeat:(\d+)$/.exec(item.key ?? "")?.[1] ?? Number.NaN), id: item.id }))
    .sort((a, b) => a.tickAtMs - b.tickAtMs);
}

async function waitForTick(client: () => Promise<OrqClient>, afterMs: number): Promise<Array<{ tickAtMs: number; id: string }>> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const seen = await ticks(await client());
    if ((seen[seen.length - 1]?.tickAtMs ?? 0) > afterMs + 1000) return seen;
    await sleep(100);
  }
  throw new Error(`no tick after ${afterMs}`);
}

async function cli(port: number, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([bunPath, mainPath, ...args, "--server", `127.0.0.1:${port}`, "--ns", ns], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe.skipIf(!postgresAvailable())("schedules in cluster mode", () => {
  const clusters = clusterPerTest();

  test("the CLI at any node: schedule and unschedule reach the owner; schedules at any node lists every node's by name", async () => {
    const cluster = await clusters.start({ label: "schedcli", nodes: 3, shards, leaseMs: 1500 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "balanced");
    // Names on at least two owners, each set through a node that does not own it.
    const names = ["a", "b", "c", "d", "e", "f"];
    const owners = new Set(names.map((n) => indexOf(map.owners, shardOfSchedule(ns, n, ungrouped, shards))));
    expect(owners.size).toBeGreaterThan(1);
    for (const n of names) {
      const elsewhere = (indexOf(map.owners, shardOfSchedule(ns, n, ungrouped, shards)) + 1) % 3;
      const set = await cli(cluster.nodes[elsewhere]!.port, ["schedule", n, "--every-ms", "3600000", "--topic", topic]);
      expect([set.code, set.stderr]).toEqual([0, ""]);
    }
    // Any node answers for the whole cluster, whichever shards it owns.
    for (const node of [0, 1, 2]) {
      const page = await retrying(async () => (await cluster.client(node)).request("schedules", { ns, limit: 2, after: "b" }));
      expect([(page.schedules as Array<{ name: string }>).map((s) => s.name), page.next]).toEqual([["c", "d"], "d"]);
    }
    const listed = await cli(cluster.nodes[0]!.port, ["schedules", "--json"]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { schedules: Array<{ name: string }> }).schedules.map((s) => s.name)).toEqual(names);
    const paged = JSON.parse((await cli(cluster.nodes[1]!.port, ["schedules", "--json", "--limit", "4"])).stdout) as { schedules: Array<{ name: string }>; next: string | null };
    expect([paged.schedules.map((s) => s.name), paged.next]).toEqual([["a", "b", "c", "d"], "d"]);
    const removed = await cli(cluster.nodes[2]!.port, ["unschedule", "c"]);
    expect([removed.code, removed.stdout.trim()]).toEqual([0, "removed c"]);
    const after = JSON.parse((await cli(cluster.nodes[2]!.port, ["schedules", "--json", "--all"])).stdout) as { schedules: Array<{ name: string }> };
    expect(after.schedules.map((s) => s.name)).toEqual(["a", "b", "d", "e", "f"]);
  }, 120_000);

  test("one node fires a schedule; across a SIGKILL and a SIGTERM handover no tick has two items and none is lost beyond catch-up", async () => {
    const cluster = await clusters.start({ label: "schedules", nodes: 3, shards, leaseMs: 1500 });
    let map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "balanced");
    const shard = shardOfSchedule(ns, name, ungrouped, shards);
    const owner = indexOf(map.owners, shard);
    const other = (owner + 1) % 3;
    const fields = { ns, name, every_ms: 1000, item: { topic, priority: 1 } };
    // Another node refuses with MOVED, naming the owner; nothing is set there.
    const refused = await (await cluster.client(other)).request("schedule", fields).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OrqError);
    expect((refused as OrqError).code).toBe("MOVED");
    const setAtMs = Date.now();
    await retrying(async () => (await cluster.client(owner)).request("schedule", fields));
    await waitForTick(() => cluster.client(owner), setAtMs);

    // Failover 1: SIGKILL the owner mid-ticking.
    await sleep(300);
    const killedAtMs = Date.now();
    await cluster.nodes[owner]!.stop("SIGKILL");
    const live = [0, 1, 2].filter((i) => i !== owner);
    map = await cluster.waitFor(live[0]!, ClusterHarness.balanced(live.map((i) => `n${i}`), shards), "survivors own every shard");
    const next = indexOf(map.owners, shard);
    await waitForTick(() => cluster.client(next), killedAtMs);

    // Failover 2: the new owner hands its shards over on SIGTERM.
    await sleep(300);
    const handedAtMs = Date.now();
    await cluster.nodes[next]!.stop("SIGTERM");
    const last = live.find((i) => i !== next)!;
    await cluster.waitFor(last, ClusterHarness.balanced([`n${last}`], shards), "the last node owns every shard");
    const seen = await waitForTick(() => cluster.client(last), handedAtMs);

    const failovers = [killedAtMs, handedAtMs];
    if (process.env.ORQ_DEBUG_TICKS === "1") console.log(failovers, seen);
    // Every item lives on the schedule's shard, and no tick has two.
    expect(seen.every((t) => t.id.startsWith(`${shard}:`))).toBe(true);
    expect(new Set(seen.map((t) => t.tickAtMs)).size).toBe(seen.length);
    for (let i = 1; i < seen.length; i++) {
      const gap = (seen[i]!.tickAtMs - seen[i - 1]!.tickAtMs) / 1000;
      expect(Number.isInteger(gap) && gap >= 1).toBe(true);
      // A gap of more than one period only across a failover: catch_up "one" fires the latest missed tick, once.
      if (gap > 1) expect(failovers.some((at) => at >= seen[i - 1]!.tickAtMs - 1000 && at <= seen[i]!.tickAtMs)).toBe(true);
    }
    const listed = await retrying(async () => (await cluster.client(last)).request("schedules", { ns }));
    const schedule = (listed.schedules as Array<Record<string, unknown>>)[0]!;
    expect([schedule.name, schedule.every_ms, schedule.catch_up]).toEqual([name, 1000, "one"]);
    const now = await ticks(await cluster.client(last));
    expect(now.find((t) => t.tickAtMs === schedule.last_at_ms)?.id).toBe(schedule.last_id as string);
  }, 120_000);
});
