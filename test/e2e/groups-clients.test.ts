// Goal: groups, policies, group pauses and explain (the contract's "Fair
// sharing and limits") work end to end through every client the project
// ships, against a real `orq serve`: the TypeScript client (OrqClient, and
// OrqClusterClient in front of a single node), the CLI as a child process
// (human and --json output, exit codes), and the Python client as a child
// process (skipped when /usr/bin/python3 or its msgpack module is missing).
// Each client works in its own namespace, so their groups and policies do not
// meet. Then on a 3-node cluster (skipped without PostgreSQL): grouped items
// land on their group's shard as the client computes it, `groups` from the
// cluster client and the CLI covers every node, and a pause, resume or policy
// sent through the cluster client reads back at once.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { OrqClient, OrqClusterClient, type Delivery } from "../../src/client/index.ts";
import { itemShard } from "../../src/client/item-shard.ts";
import { ClusterHarness } from "../support/cluster-harness.ts";
import { postgresAvailable, releasePostgres, sharedPostgres } from "../support/postgres-server.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const python = "/usr/bin/python3";

let server: ServerProcess;
let client: OrqClient;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--shards", "4"] });
  client = await OrqClient.connect({ port: server.port, clientName: "groups-e2e" });
});

afterAll(async () => {
  await client?.close();
  await server?.cleanup();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function orq(args: string[], port = server.port): Promise<Run> {
  const proc = Bun.spawn([bunPath, mainPath, ...args], {
    env: { PATH: process.env.PATH ?? "", ORQ_SERVER: `127.0.0.1:${port}` },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

async function orqJson(args: string[], port = server.port): Promise<Record<string, any>> {
  const run = await orq([...args, "--json"], port);
  if (run.code !== 0) throw new Error(`orq ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const reasonsOf = (explained: { reasons: Array<{ reason: string }> } | null): string[] => explained?.reasons.map((r) => r.reason) ?? [];

describe("TypeScript client", () => {
  const ns = "ts-groups";

  test("group travels with items, item states and deliveries", async () => {
    const [grouped, plain] = await client.enqueue(ns, [{ topic: "g", group: "acme" }, { topic: "g" }]);
    const states = await client.get(ns, [grouped!, plain!]);
    expect(states[0]).toMatchObject({ id: grouped, group: "acme" });
    expect(states[1]).not.toHaveProperty("group");
    const deliveries = await client.dequeue(ns, { topics: [{ topic: "g", count: 2 }] });
    expect(Object.fromEntries(deliveries.map((d: Delivery) => [d.id, d.group]))).toEqual({ [grouped!]: "acme", [plain!]: undefined });
    await client.ack(ns, deliveries.map((d) => d.receipt));
  });

  test("policy: set, list in order, page, replace, clear", async () => {
    expect(await client.policy(ns, "p", { maxLeased: 5 })).toEqual({ policy: { maxLeased: 5 } });
    expect(await client.policy(ns, "p", { group: "acme", weight: 3, rate: { count: 10, perMs: 1000 } })).toEqual({
      policy: { group: "acme", weight: 3, rate: { count: 10, perMs: 1000 } },
    });
    await client.policy(ns, "p", { group: "*", weight: 2 });
    const page = await client.policies(ns, "p");
    expect(page.next).toBeNull();
    expect(page.policies.map((p) => p.group)).toEqual([undefined, "*", "acme"]);
    const first = await client.policies(ns, "p", { limit: 1 });
    expect(first.policies).toEqual([{ maxLeased: 5 }]);
    expect(first.next).not.toBeNull();
    const rest = await client.policies(ns, "p", { after: first.next! });
    expect(rest.policies.map((p) => p.group)).toEqual(["*", "acme"]);
    // A policy request replaces the whole stored policy.
    expect(await client.policy(ns, "p", { group: "acme", maxLeased: 1 })).toEqual({ policy: { group: "acme", maxLeased: 1 } });
    expect(await client.policy(ns, "p", { group: "acme", clear: true })).toEqual({ cleared: true });
    expect(await client.policy(ns, "p", { group: "acme", clear: true })).toEqual({ cleared: false });
    expect((await client.policies(ns, "p")).policies.map((p) => p.group)).toEqual([undefined, "*"]);
  });

  test("groups: counts by group, the null group first, paged", async () => {
    await client.enqueue(ns, [{ topic: "c", group: "b" }, { topic: "c", group: "a" }, { topic: "c", group: "a", delayMs: 3_600_000 }, { topic: "c" }]);
    const page = await client.groups(ns, "c");
    expect(page.next).toBeNull();
    expect(page.groups.map((g) => [g.group, g.ready, g.delayed, g.paused])).toEqual([
      [null, 1, 0, false],
      ["a", 1, 1, false],
      ["b", 1, 0, false],
    ]);
    const first = await client.groups(ns, "c", { limit: 1 });
    expect(first.groups.map((g) => g.group)).toEqual([null]);
    expect(first.next).not.toBeNull();
    expect((await client.groups(ns, "c", { after: first.next! })).groups.map((g) => g.group)).toEqual(["a", "b"]);
  });

  test("pause one group: only its items are held back; explain says so; resume lets them go", async () => {
    const [held, free] = await client.enqueue(ns, [{ topic: "pg", group: "held" }, { topic: "pg", group: "free", priority: 1 }]);
    const paused = await client.pause(ns, "pg", { group: "held", forMs: 3_600_000 });
    expect(paused.pausedUntilMs).toBeGreaterThan(Date.now());
    const entry = (await client.groups(ns, "pg")).groups.find((g) => g.group === "held");
    expect(entry).toMatchObject({ paused: true, pausedUntilMs: paused.pausedUntilMs! });
    expect(reasonsOf((await client.explain(ns, [held!]))[0]!)).toContain("group_paused");
    const first = await client.dequeue(ns, { topics: [{ topic: "pg", count: 2 }] });
    expect(first.map((d) => d.id)).toEqual([free!]);
    expect(await client.resume(ns, "pg", { group: "held" })).toEqual({ resumed: true });
    expect(await client.resume(ns, "pg", { group: "held" })).toEqual({ resumed: false });
    const second = await client.dequeue(ns, { topics: [{ topic: "pg", count: 2 }] });
    expect(second.map((d) => d.id)).toEqual([held!]);
    await client.ack(ns, [...first, ...second].map((d) => d.receipt));
  });

  test("explain: reasons in request order, null for an unknown id; max_leased names its bound", async () => {
    await client.policy(ns, "x", { group: "one", maxLeased: 1 });
    const [a, b, later] = await client.enqueue(ns, [{ topic: "x", group: "one" }, { topic: "x", group: "one" }, { topic: "x", delayMs: 3_600_000 }]);
    const [leased] = await client.dequeue(ns, { topics: [{ topic: "x", count: 1 }], leaseMs: 60_000 });
    expect(leased!.id).toBe(a!);
    const explained = await client.explain(ns, [b!, "0:999999999", later!, a!]);
    expect(explained[1]).toBeNull();
    expect(explained[0]!.reasons).toContainEqual({ reason: "group_max_leased", leased: 1, max: 1 });
    expect(explained[2]!.state).toBe("delayed");
    expect(reasonsOf(explained[2]!)).toContain("delayed");
    expect(explained[3]!.reasons).toContainEqual({ reason: "leased", untilMs: leased!.leaseExpiresAtMs });
    await client.ack(ns, [leased!.receipt]);
  });

  test("the cluster client in front of a single node answers the same", async () => {
    const cluster = await OrqClusterClient.connect({ port: server.port });
    try {
      const [id] = await cluster.enqueue(ns, [{ topic: "cc", group: "acme", key: "k1" }]);
      expect((await cluster.groups(ns, "cc")).groups.map((g) => [g.group, g.ready])).toEqual([["acme", 1]]);
      expect(await cluster.policy(ns, "cc", { group: "acme", maxLeased: 2 })).toEqual({ policy: { group: "acme", maxLeased: 2 } });
      expect((await cluster.policies(ns, "cc")).policies).toEqual([{ group: "acme", maxLeased: 2 }]);
      expect((await cluster.pause(ns, "cc", { group: "acme" })).pausedUntilMs).toBeNull();
      expect(reasonsOf((await cluster.explain(ns, [id!]))[0]!)).toContain("group_paused");
      expect(await cluster.resume(ns, "cc", { group: "acme" })).toEqual({ resumed: true });
    } finally {
      await cluster.close();
    }
  });
});

describe("CLI", () => {
  const ns = ["--ns", "cli-groups"];

  test("enqueue --group, get shows it; groups in a table and --json, --sort backlog", async () => {
    const one = await orqJson(["enqueue", ...ns, "--topic", "t", "--payload", "x", "--group", "small"]);
    for (let i = 0; i < 3; i++) await orqJson(["enqueue", ...ns, "--topic", "t", "--payload", "y", "--group", "big"]);
    await orqJson(["enqueue", ...ns, "--topic", "t", "--payload", "z"]);
    const got = await orqJson(["get", ...ns, one.id]);
    expect(got.items[0]).toMatchObject({ id: one.id, group: "small" });
    expect((await orq(["get", ...ns, one.id])).stdout).toMatch(/group\s+small/);

    const byName = await orqJson(["groups", ...ns, "--topic", "t"]);
    expect(byName.groups.map((g: { group: string | null; ready: number }) => [g.group, g.ready])).toEqual([
      [null, 1],
      ["big", 3],
      ["small", 1],
    ]);
    expect(byName.next).toBeNull();
    const byBacklog = await orqJson(["groups", ...ns, "--topic", "t", "--sort", "backlog", "--limit", "1"]);
    expect(byBacklog.groups.map((g: { group: string | null }) => g.group)).toEqual(["big", null, "small"]);
    const human = await orq(["groups", ...ns, "--topic", "t"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/GROUP\s+READY\s+DELAYED\s+WAITING\s+LEASED\s+DEAD\s+PAUSED\n\(none\)\s+1\s+0\s+0\s+0\s+0\s+-\nbig\s+3/);
    const empty = await orq(["groups", ...ns, "--topic", "nothing-here"]);
    expect([empty.code, empty.stdout, empty.stderr.trim()]).toEqual([0, "", "no groups in topic nothing-here"]);
  });

  test("policy: set in words and --json, --rate in its one form, usage errors exit 2, clear", async () => {
    const set = await orq(["policy", ...ns, "--topic", "p", "--group", "acme", "--weight", "3", "--max-leased", "2", "--rate", "10/1s"]);
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toBe("policy of p group acme: weight 3, max leased 2, rate 10/1s");
    const own = await orqJson(["policy", ...ns, "--topic", "p", "--rate", "600/1m"]);
    expect(own).toEqual({ topic: "p", policy: { rate: { count: 600, per_ms: 60_000 } } });
    await orqJson(["policy", ...ns, "--topic", "p", "--group", "*", "--weight", "1"]);

    const listed = await orqJson(["policies", ...ns, "--topic", "p"]);
    expect(listed).toEqual({
      policies: [{ rate: { count: 600, per_ms: 60_000 } }, { group: "*", weight: 1 }, { group: "acme", weight: 3, max_leased: 2, rate: { count: 10, per_ms: 1000 } }],
      next: null,
    });
    const table = await orq(["policies", ...ns, "--topic", "p"]);
    expect(table.stdout).toMatch(/GROUP\s+WEIGHT\s+MAX LEASED\s+RATE\n\(topic\)\s+-\s+-\s+600\/1m\n\* \(default\)\s+1\s+-\s+-\nacme\s+3\s+2\s+10\/1s/);
    const paged = await orqJson(["policies", ...ns, "--topic", "p", "--limit", "1", "--all"]);
    expect(paged.policies.length).toBe(3);

    for (const bad of [
      ["--topic", "p", "--group", "acme"],
      ["--topic", "p", "--group", "acme", "--clear", "--weight", "2"],
      ["--topic", "p", "--weight", "2"],
      ["--topic", "p", "--rate", "10 per second"],
      ["--topic", "p", "--group", "acme", "--weight", "10001"],
    ]) {
      const run = await orq(["policy", ...ns, ...bad]);
      expect(run.code).toBe(2);
    }

    const cleared = await orq(["policy", ...ns, "--topic", "p", "--group", "acme", "--clear"]);
    expect(cleared.stdout.trim()).toBe("cleared the policy of p group acme");
    expect(await orqJson(["policy", ...ns, "--topic", "p", "--group", "acme", "--clear"])).toEqual({ topic: "p", group: "acme", cleared: false });
    const none = await orq(["policies", ...ns, "--topic", "no-policies"]);
    expect([none.code, none.stdout, none.stderr.trim()]).toEqual([0, "", "no policies for topic no-policies"]);
  });

  test("pause and resume --group; explain in words and --json; an unknown id exits 3", async () => {
    const held = await orqJson(["enqueue", ...ns, "--topic", "pz", "--payload", "h", "--group", "held"]);
    const paused = await orq(["pause", ...ns, "--topic", "pz", "--group", "held"]);
    expect(paused.stdout.trim()).toBe("paused pz group held until resumed");
    const pausedJson = await orqJson(["pause", ...ns, "--topic", "pz", "--group", "held", "--for-ms", "3600000"]);
    expect(pausedJson).toMatchObject({ topic: "pz", group: "held" });
    expect(pausedJson.paused_until_ms).toBeGreaterThan(Date.now());
    const groups = await orq(["groups", ...ns, "--topic", "pz"]);
    expect(groups.stdout).toMatch(/held\s+1\s+0\s+0\s+0\s+0\s+until \d{4}-/);

    const explained = await orq(["explain", ...ns, held.id]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(new RegExp(`id\\s+${held.id}\\nstate\\s+ready\\n`));
    expect(explained.stdout).toMatch(/why\s+group paused until \d{4}-/);
    const json = await orqJson(["explain", ...ns, held.id]);
    expect(json.items[0].reasons.map((r: { reason: string }) => r.reason)).toContain("group_paused");
    expect(json.items[0].reasons.find((r: { reason: string }) => r.reason === "group_paused").until_ms).toBe(pausedJson.paused_until_ms);
    const missing = await orq(["explain", ...ns, held.id, "0:999999999"]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain("0:999999999  not found");

    expect((await orq(["resume", ...ns, "--topic", "pz", "--group", "held"])).stdout.trim()).toBe("resumed pz group held");
    expect(await orqJson(["resume", ...ns, "--topic", "pz", "--group", "held"])).toEqual({ topic: "pz", group: "held", resumed: false });
    const delivered = await orqJson(["dequeue", ...ns, "--topic", "pz"]);
    expect(delivered.items[0]).toMatchObject({ id: held.id, group: "held" });
  });

  test("--help lists the new commands and flags", async () => {
    const help = await orq(["--help"]);
    for (const command of ["groups", "policy", "policies", "explain"]) expect(help.stdout).toContain(`  ${command} `);
    for (const [command, flag] of [["pause", "--group"], ["resume", "--group"], ["enqueue", "--group"], ["policy", "--rate"], ["groups", "--sort"]] as const) {
      expect((await orq([command, "--help"])).stdout).toContain(flag);
    }
  });
});

/** Whether the Python client can run here: Debian's python3 with its msgpack module. */
function pythonReady(): boolean {
  if (!existsSync(python)) return false;
  return Bun.spawnSync([python, "-c", "import msgpack"]).exitCode === 0;
}

/** Runs `body` (Python, with `orq` a connected Client and `NS` set) and returns what it printed as JSON. */
async function runPython(body: string): Promise<unknown> {
  const script = [
    "import json, sys",
    `sys.path.insert(0, ${JSON.stringify(join(repoRoot, "clients/python"))})`,
    "from orq import Client, ClusterClient",
    `orq = Client.open("127.0.0.1", ${server.port})`,
    `NS = "py-groups"`,
    body,
  ].join("\n");
  const proc = Bun.spawn([python, "-c", script], { env: { PATH: process.env.PATH ?? "", PYTHONDONTWRITEBYTECODE: "1" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`python exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

describe.skipIf(!pythonReady())("Python client", () => {
  test("policy, policies, groups, pause and resume a group, explain; the cluster client in front of one node", async () => {
    const result = (await runPython(`
held, free = orq.enqueue(NS, [{"topic": "t", "group": "held"}, {"topic": "t", "group": "free", "priority": 1}])
out = {}
out["policy"] = orq.policy(NS, "t", group="free", weight=2, rate=(5, 1000))
out["policies"] = [p.get("group") for p in orq.policies_all(NS, "t", limit=1)]
out["paused"] = orq.pause(NS, "t", group="held")
out["groups"] = [[g["group"], g["ready"], g["paused"]] for g in orq.groups_all(NS, "t", limit=1)]
out["why"] = [r["reason"] for r in orq.explain(NS, [held])[0]["reasons"]]
out["taken"] = [d["id"] == free and d["group"] for d in orq.dequeue(NS, {"t": 2})]
out["resumed"] = orq.resume(NS, "t", group="held")
cluster = ClusterClient("127.0.0.1", ${server.port})
out["cluster_groups"] = [g["group"] for g in cluster.groups(NS, "t")["groups"]]
out["cluster_cleared"] = cluster.policy(NS, "t", group="free", clear=True)
out["cluster_explain"] = [e and e["id"] == held for e in cluster.explain(NS, [held, "0:999999999"])]
cluster.close()
print(json.dumps(out))
`)) as Record<string, unknown>;
    expect(result.policy).toEqual({ policy: { group: "free", weight: 2, rate: { count: 5, per_ms: 1000 } } });
    expect(result.policies).toEqual(["free"]);
    expect(result.paused).toBeNull();
    expect(result.groups).toEqual([
      ["free", 1, false],
      ["held", 1, true],
    ]);
    expect(result.why).toContain("group_paused");
    expect(result.taken).toEqual(["free"]);
    expect(result.resumed).toBe(true);
    expect(result.cluster_groups).toEqual(["free", "held"]);
    expect(result.cluster_cleared).toEqual({ cleared: true });
    expect(result.cluster_explain).toEqual([true, null]);
  });
});

describe.skipIf(!postgresAvailable())("on a cluster", () => {
  const ns = "cluster-groups";
  const shards = 6;
  let cluster: ClusterHarness | null = null;
  let routed: OrqClusterClient | null = null;

  beforeAll(async () => {
    await sharedPostgres();
  });

  afterAll(async () => {
    await routed?.close();
    await cluster?.cleanup();
    releasePostgres();
  });

  test("grouped items on their group's shard; groups over every node from the client and the CLI; pauses and policies read back", async () => {
    cluster = await ClusterHarness.start({ label: "groups_clients", nodes: 3, shards });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "balanced");
    const node = cluster.nodes[0]!;
    routed = await OrqClusterClient.connect({ host: node.host, port: node.port });
    const tenants = Array.from({ length: 9 }, (_, i) => `tenant-${i}`);
    const items = tenants.flatMap((group) => [0, 1].map((i) => ({ topic: "fair", group, key: `${group}-${i}` })));
    const ids = await routed.enqueue(ns, items);
    ids.forEach((id, i) => expect(Number(id.split(":")[0])).toBe(itemShard(ns, items[i]!, shards)));
    const owners = new Set(ids.map((id) => map.owners[Number(id.split(":")[0])]));
    expect(owners.size).toBeGreaterThan(1);

    const listed: Array<[string | null, number]> = [];
    let after: string | undefined;
    for (let page = 0; page < 20; page++) {
      const got = await routed.groups(ns, "fair", { limit: 2, after });
      listed.push(...got.groups.map((g): [string | null, number] => [g.group, g.ready]));
      if (got.next === null) break;
      after = got.next;
    }
    expect(listed).toEqual(tenants.map((t): [string, number] => [t, 2]));
    const cli = await orqJson(["groups", "--ns", ns, "--topic", "fair", "--limit", "4", "--all"], node.port);
    expect(cli.groups.map((g: { group: string; ready: number }) => [g.group, g.ready])).toEqual(tenants.map((t) => [t, 2]));

    // Sent to one node, a change reads back at once through the same client.
    expect(await routed.policy(ns, "fair", { group: "tenant-0", maxLeased: 1 })).toEqual({ policy: { group: "tenant-0", maxLeased: 1 } });
    expect((await routed.policies(ns, "fair")).policies).toEqual([{ group: "tenant-0", maxLeased: 1 }]);
    expect((await routed.pause(ns, "fair", { group: "tenant-1" })).pausedUntilMs).toBeNull();
    expect(await routed.resume(ns, "fair", { group: "tenant-1" })).toEqual({ resumed: true });
    const explained = await routed.explain(ns, ids);
    expect(explained.map((e) => e?.id)).toEqual(ids);
    expect(await routed.policy(ns, "fair", { group: "tenant-0", clear: true })).toEqual({ cleared: true });
    expect((await routed.cancel(ns, ids)).cancelled).toBe(ids.length);
  });
});
