// Goal: on a cluster the CLI's read and repair commands cover every node, not
// just the one asked: `orq dead` lists every node's dead letters (from the
// nodes in turn, up to --limit), `orq redrive` with ids reaches each id's
// owner and without ids asks every node and sums, `orq stats` shows the
// cluster's sum and a row per node, and `orq list` pages over every node's
// items under one cursor, listing each item once. Three real nodes on
// PostgreSQL; the CLI runs as a child process talking to node 0 only.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import type { Delivery } from "../../src/client/types.ts";
import { ClusterHarness } from "../support/cluster-harness.ts";
import { bunPath, mainPath } from "../support/server-process.ts";
import { postgresAvailable, releasePostgres, sharedPostgres } from "../support/postgres-server.ts";

const ns = "clidead";
const shards = 6;
const encoder = new TextEncoder();

describe.skipIf(!postgresAvailable())("the CLI on a cluster", () => {
  let cluster: ClusterHarness | null = null;
  let client: OrqClusterClient | null = null;

  beforeAll(async () => {
    await sharedPostgres();
  });

  afterEach(async () => {
    await client?.close();
    client = null;
    await cluster?.cleanup();
    cluster = null;
  });

  afterAll(() => releasePostgres());

  test("dead, redrive, stats and list cover every node", async () => {
    cluster = await ClusterHarness.start({ label: "cli_merge", nodes: 3, shards });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "balanced");
    const ownerOf = (id: string): string => map.owners[Number(id.split(":")[0])] as string;
    const node = cluster.nodes[0]!;
    client = await OrqClusterClient.connect({ host: node.host, port: node.port });
    // Twelve keyed items over the six shards; one attempt each, so a nack makes a dead letter.
    const ids = await client.enqueue(ns, Array.from({ length: 12 }, (_, i) => ({ topic: "d", payload: encoder.encode(`d${i}`), key: `k${i}`, maxAttempts: 1 })));
    expect(new Set(ids.map(ownerOf))).toEqual(new Set(["n0", "n1", "n2"]));
    const taken: Delivery[] = [];
    for (let round = 0; round < 100 && taken.length < ids.length; round++) taken.push(...(await client.dequeue(ns, { topics: [{ topic: "d", count: 12 }], waitMs: 100 })));
    expect((await client.nack(ns, taken.map((d) => ({ receipt: d.receipt })))).nacked).toBe(12);

    const server = `127.0.0.1:${node.port}`;
    const orq = async (...args: string[]) => {
      const proc = Bun.spawn([bunPath, mainPath, ...args, "--server", server, "--ns", ns], { stdout: "pipe", stderr: "pipe" });
      const code = await proc.exited;
      return { code, stdout: await new Response(proc.stdout).text(), stderr: await new Response(proc.stderr).text() };
    };
    const json = async (...args: string[]) => {
      const result = await orq(...args, "--json");
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout);
    };

    // dead: every node's; with --limit, from the nodes in turn (the first three are one per node).
    const dead = (await json("dead", "--topic", "d")).items as Array<{ id: string; state: string }>;
    expect(dead.map((item) => item.id).sort()).toEqual([...ids].sort());
    const five = (await json("dead", "--topic", "d", "--limit", "5")).items as Array<{ id: string }>;
    expect(five.length).toBe(5);
    expect(new Set(five.slice(0, 3).map((item) => ownerOf(item.id)))).toEqual(new Set(["n0", "n1", "n2"]));

    // stats: the cluster's sum, and each node's own.
    const stats = await json("stats");
    expect(stats.namespaces[ns]).toMatchObject({ dead: 12, topic_count: 1 });
    expect(stats.namespaces[ns].topics.d.dead).toBe(12);
    expect(stats.nodes.map((n: { node_id: string }) => n.node_id).sort()).toEqual(["n0", "n1", "n2"]);
    const perNode = stats.nodes.map((n: { stats: { namespaces: Record<string, { dead?: number }> } }) => n.stats.namespaces[ns]?.dead ?? 0);
    expect(perNode.reduce((sum: number, n: number) => sum + n, 0)).toBe(12);
    expect(perNode.every((n: number) => n > 0)).toBe(true);
    const human = await orq("stats");
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("cluster of 3 nodes");
    for (const id of ["n0", "n1", "n2"]) expect(human.stdout).toMatch(new RegExp(`^${id}\\s`, "m"));

    // list: pages of 4 under one cursor list every item once.
    const listed: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 50; page++) {
      const args = ["list", "--topic", "d", "--limit", "4", ...(after === null ? [] : ["--after", after])];
      const result = await json(...args);
      listed.push(...(result.items as Array<{ id: string }>).map((item) => item.id));
      after = result.next;
      if (after === null) break;
    }
    expect(after).toBeNull();
    expect(listed.sort()).toEqual([...ids].sort());
    expect(new Set((await json("list", "--topic", "d", "--all")).items.map((item: { id: string }) => item.id)).size).toBe(12);

    // redrive: two ids on different nodes reach their owners; then the rest from every node.
    const pair = [ids.find((id) => ownerOf(id) === "n1")!, ids.find((id) => ownerOf(id) === "n2")!];
    expect(await json("redrive", "--topic", "d", ...pair)).toEqual({ redriven: 2 });
    expect(await json("redrive", "--topic", "d")).toEqual({ redriven: 10 });
    const none = await orq("dead", "--topic", "d");
    expect(none.stderr).toContain("no dead letters");
    const topics = (await json("topics")).topics as Array<{ topic: string; ready: number; dead: number }>;
    expect(topics).toEqual([expect.objectContaining({ topic: "d", ready: 12, dead: 0 })]);
  });
});
