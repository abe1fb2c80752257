// Goal: on three real nodes over one PostgreSQL, a schedule whose item names
// a group lives on its group's shard (not its name's): a node that does not
// own that shard answers `schedule` MOVED naming the group's owner, and every
// tick's item carries the group and lands on that shard, so the group's
// max_leased holds for them. Replacing it with another group (which would
// move it to another shard) is refused with BAD_REQUEST item.group. The
// owner is SIGKILLed mid-ticking; the survivor that takes the shard over goes
// on ticking, and no tick has two items. `unschedule` at the node that does
// not own it is answered MOVED (the schedule is found by its stored shard)
// and, through the CLI, which follows MOVED, removes it.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import type { OrqClient } from "../../src/client/client.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { shardOfGroup, shardOfSchedule } from "../../src/protocol/key-shard.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { bunPath, mainPath } from "../support/server-process.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "default";
const shards = 6;
const topic = "reports";
const group = "acme";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The node index that owns `shard` in `owners` (node ids are n<index>). */
function indexOf(owners: Array<string | null>, shard: number): number {
  const owner = owners[shard];
  if (owner === null || owner === undefined) throw new Error(`shard ${shard} has no owner`);
  return Number(owner.slice(1));
}

interface Tick {
  tickAtMs: number;
  id: string;
  group: string | undefined;
  state: string;
}

/** The topic's items on the node's shards: each one's tick (from its key), id, group and state. */
async function ticks(client: OrqClient, name: string): Promise<Tick[]> {
  const reply = await retrying(() => client.request("list", { ns, topic, limit: 1000 }));
  const pattern = new RegExp(`^schedule:${name}:(\\d+)$`);
  return (reply.items as Array<{ id: string; key?: string; group?: string; state: string }>)
    .map((item) => ({ tickAtMs: Number(pattern.exec(item.key ?? "")?.[1] ?? Number.NaN), id: item.id, group: item.group, state: item.state }))
    .sort((a, b) => a.tickAtMs - b.tickAtMs);
}

/** Poll until the node holds at least `count` ticks after `afterMs`. */
async function waitForTicks(client: () => Promise<OrqClient>, name: string, afterMs: number, count: number): Promise<Tick[]> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const seen = await ticks(await client(), name);
    if (seen.filter((t) => t.tickAtMs > afterMs).length >= count) return seen;
    await sleep(100);
  }
  throw new Error(`fewer than ${count} ticks after ${afterMs}`);
}

async function refusal(call: Promise<unknown>): Promise<OrqError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OrqError);
  return error as OrqError;
}

/** refusal(), asked again while the node answers UNAVAILABLE (still rebuilding after the balance waited for on another node's map). */
async function servedRefusal(ask: () => Promise<unknown>): Promise<OrqError> {
  let error = await refusal(ask());
  for (let tries = 0; tries < 200 && error.code === "UNAVAILABLE"; tries++) {
    await Bun.sleep(50);
    error = await refusal(ask());
  }
  return error;
}

async function cli(port: number, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([bunPath, mainPath, ...args, "--server", `127.0.0.1:${port}`, "--ns", ns], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe.skipIf(!postgresAvailable())("grouped schedules in cluster mode", () => {
  const clusters = clusterPerTest();

  test("a grouped schedule lives and ticks on its group's shard, bounded by the group's max_leased, across a SIGKILL failover", async () => {
    const cluster = await clusters.start({ label: "schedgroups", nodes: 3, shards, leaseMs: 1500 });
    let map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "balanced");
    const groupShard = shardOfGroup(ns, topic, group, shards);
    const owner = indexOf(map.owners, groupShard);
    // A name whose own shard another node owns, so routing by the name alone would go astray.
    const name = ["nightly", "hourly", "digest", "rollup", "sweep", "audit"].find((n) => indexOf(map.owners, shardOfSchedule(ns, n, { topic, group: null }, shards)) !== owner)!;
    expect(name).toBeDefined();
    const other = (owner + 1) % 3;
    const fields = { ns, name, every_ms: 1000, item: { topic, group, priority: 1 } };

    // The group's owner holds its policy at once (the other nodes take it up by polling).
    await retrying(async () => (await cluster.client(owner)).request("policy", { ns, topic, group, max_leased: 1 }));
    // Another node answers MOVED, naming the group's shard and its owner; nothing is set there.
    const moved = await servedRefusal(async () => (await cluster.client(other)).request("schedule", fields));
    expect([moved.code, moved.details.shard, moved.details.nodeId]).toEqual(["MOVED", groupShard, `n${owner}`]);
    const setAtMs = Date.now();
    await retrying(async () => (await cluster.client(owner)).request("schedule", fields));
    // A replacement naming another group (or none) would move it to another shard: refused at any node.
    const otherGroup = ["globex", "initech", "umbrella", "hooli"].find((g) => shardOfGroup(ns, topic, g, shards) !== groupShard)!;
    for (const item of [{ topic }, { topic, group: otherGroup }]) {
      const refused = await refusal((await cluster.client(other)).request("schedule", { ...fields, item }));
      expect([refused.code, refused.details.field]).toEqual(["BAD_REQUEST", "item.group"]);
    }

    // The group's max_leased (1) holds for the ticks' items: of two or more ready, one is leased.
    await waitForTicks(() => cluster.client(owner), name, setAtMs, 2);
    const taker = await cluster.client(owner);
    const first = await taker.request("dequeue", { ns, topics: [{ topic, count: 10 }], lease_ms: 600_000 });
    expect((first.items as unknown[]).length).toBe(1);
    const second = await taker.request("dequeue", { ns, topics: [{ topic, count: 10 }], lease_ms: 600_000 });
    expect((second.items as unknown[]).length).toBe(0);

    // Failover: SIGKILL the owner mid-ticking.
    await sleep(300);
    const killedAtMs = Date.now();
    await cluster.nodes[owner]!.stop("SIGKILL");
    const live = [0, 1, 2].filter((i) => i !== owner);
    map = await cluster.waitFor(live[0]!, ClusterHarness.balanced(live.map((i) => `n${i}`), shards), "survivors own every shard");
    const next = indexOf(map.owners, groupShard);
    const seen = await waitForTicks(() => cluster.client(next), name, killedAtMs + 1000, 2);

    if (process.env.ORQ_DEBUG_TICKS === "1") console.log(killedAtMs, seen);
    // Every tick's item carries the group and lives on the group's shard; no tick has two.
    expect(seen.every((t) => t.group === group && t.id.startsWith(`${groupShard}:`))).toBe(true);
    expect(new Set(seen.map((t) => t.tickAtMs)).size).toBe(seen.length);
    for (let i = 1; i < seen.length; i++) {
      const gap = (seen[i]!.tickAtMs - seen[i - 1]!.tickAtMs) / 1000;
      expect(Number.isInteger(gap) && gap >= 1).toBe(true);
    }
    // The new owner still holds one leased item of the group and leases no second.
    expect(seen.filter((t) => t.state === "leased").length).toBe(1);
    const after = await (await cluster.client(next)).request("dequeue", { ns, topics: [{ topic, count: 10 }] });
    expect((after.items as unknown[]).length).toBe(0);

    // unschedule at the node that does not own the group's shard: MOVED to its owner (found by the stored shard)...
    const elsewhere = live.find((i) => i !== next)!;
    const unmoved = await servedRefusal(async () => (await cluster.client(elsewhere)).request("unschedule", { ns, name }));
    expect([unmoved.code, unmoved.details.shard, unmoved.details.nodeId]).toEqual(["MOVED", groupShard, `n${next}`]);
    // ...which the CLI follows.
    const removed = await cli(cluster.nodes[elsewhere]!.port, ["unschedule", name]);
    expect([removed.code, removed.stdout.trim()]).toEqual([0, `removed ${name}`]);
    const listed = await retrying(async () => (await cluster.client(elsewhere)).request("schedules", { ns }));
    expect(listed.schedules).toEqual([]);
  }, 120_000);
});
