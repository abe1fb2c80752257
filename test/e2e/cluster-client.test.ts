// Goal: the cluster client hides the cluster: connected to one node it sends
// keyed items to their key's shard, items that name no shard to one node
// until stickyItems went there (then the next), splits a batch of ids over their owners,
// merges topics across nodes, and its worker loop rides through a SIGKILL of
// a node, also under a steady stream of enqueues: every item is acked exactly
// once (an acked item never comes back), including items whose shard moved
// while their handler ran; an ack the killed node committed but never
// answered is found ended by `get`, not delivered again. The CLI routes
// through it too.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { afterEach, describe, expect, test } from "bun:test";
import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import type { WorkerEvent } from "../../src/client/worker.ts";
import { shardOfKey } from "../../src/protocol/key-shard.ts";
import { ClusterHarness, clusterPerTest } from "../support/cluster-harness.ts";
import { bunPath, mainPath } from "../support/server-process.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "default";
const encoder = new TextEncoder();
/** Longest the worker test waits for every item to be acked (60 s): past item leases and a takeover. */
const drainWaitMsMax = 60_000;

/**
 * Poll (not a timing) until every id of `ids` is acked by the workers
 * (`acked`) or found ended as acked by `get`, or drainWaitMsMax passes. An ack
 * the killed node committed but could not answer is retried at the new
 * owner, which finds the item ended and answers it stale: acked once all the
 * same, and never delivered again; `get` tells those apart. With
 * `answeredStale`, an item counts so only if its ack was answered stale.
 * Returns the items found acked that way, and what is still unacked.
 */
async function awaitAcked(
  client: OrqClusterClient,
  ids: ReadonlySet<string>,
  acked: ReadonlyMap<string, number>,
  answeredStale: (() => ReadonlySet<string>) | null,
): Promise<{ ackedUnanswered: Set<string>; unacked: () => string[] }> {
  const ackedUnanswered = new Set<string>();
  const unacked = (): string[] => [...ids].filter((id) => !acked.has(id) && !ackedUnanswered.has(id));
  const deadline = performance.now() + drainWaitMsMax;
  for (let poll = 1; unacked().length > 0 && performance.now() < deadline; poll++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (poll % 20 !== 0) continue;
    const states = await client.get(ns, unacked()).catch(() => []);
    const stale = answeredStale?.() ?? null;
    for (const state of states) {
      if (state === null || state.state !== "ended" || !("outcome" in state) || state.outcome !== "acked") continue;
      if (stale === null || stale.has(state.id)) ackedUnanswered.add(state.id);
    }
  }
  return { ackedUnanswered, unacked };
}

describe.skipIf(!postgresAvailable())("the cluster client", () => {
  const clients: OrqClusterClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });
  const clusters = clusterPerTest();

  async function connect(index: number, options: { stickyItems?: number } = {}): Promise<OrqClusterClient> {
    const node = clusters.current!.nodes[index]!;
    const client = await OrqClusterClient.connect({ host: node.host, port: node.port, ...options });
    clients.push(client);
    return client;
  }

  test("routes keyed items, id batches and topics over three nodes", async () => {
    const cluster = await clusters.start({ label: "client_route", nodes: 3, shards: 6 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    const client = await connect(0);
    const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
    const ids = await client.enqueue(ns, keys.map((key) => ({ topic: "r", payload: encoder.encode(key), key })));
    ids.forEach((id, i) => expect(Number(id.split(":")[0])).toBe(shardOfKey(ns, "r", keys[i]!, 6)));
    // The same keys again: the same ids, wherever they live.
    expect(await client.enqueue(ns, keys.map((key) => ({ topic: "r", payload: encoder.encode("again"), key })))).toEqual(ids);
    const plain = await client.enqueue(ns, Array.from({ length: 6 }, (_, i) => ({ topic: "r", payload: encoder.encode(`p${i}`) })));
    const states = await client.get(ns, [...ids, ...plain]);
    expect(states.map((s) => (s as { id: string }).id)).toEqual([...ids, ...plain]);
    expect((await client.topics(ns)).topics.find((t) => t.topic === "r")).toMatchObject({ ready: 18 });
    expect((await client.cancel(ns, ids)).cancelled).toBe(12);
    expect((await client.topics(ns)).topics.find((t) => t.topic === "r")).toMatchObject({ ready: 6 });
  });

  test("items that name no shard stay on one node for stickyItems, then go to the next; a call is never split", async () => {
    const cluster = await clusters.start({ label: "client_sticky", nodes: 3, shards: 6 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    const client = await connect(0, { stickyItems: 3 });
    const owner = (id: string): string | null => map.owners[Number(id.split(":")[0])] ?? null;
    const owners: Array<string | null> = [];
    for (let i = 0; i < 9; i++) owners.push(owner((await client.enqueue(ns, [{ topic: "sticky", payload: encoder.encode(`s${i}`) }]))[0]!));
    // Three on one node, three on the next, three on the third.
    const runs = [owners.slice(0, 3), owners.slice(3, 6), owners.slice(6, 9)];
    expect({ owners, sizes: runs.map((run) => new Set(run).size) }).toEqual({ owners, sizes: [1, 1, 1] });
    expect({ owners, nodes: new Set(runs.map((run) => run[0])).size }).toEqual({ owners, nodes: 3 });
    // Five items with room for three on the current node: all five go to one node together.
    const call = await client.enqueue(ns, Array.from({ length: 5 }, () => ({ topic: "sticky", payload: encoder.encode("c") })));
    expect(new Set(call.map(owner)).size).toBe(1);
    expect((await client.cancel(ns, call)).cancelled).toBe(5);
    // A call of 100 is a commit's worth by itself: the next node in turn, while single items keep to their node.
    const fresh = await connect(0, { stickyItems: 3 });
    const first = owner((await fresh.enqueue(ns, [{ topic: "sticky", payload: encoder.encode("f") }]))[0]!);
    const big = await fresh.enqueue(ns, Array.from({ length: 100 }, () => ({ topic: "sticky", payload: encoder.encode("b") })));
    const second = owner((await fresh.enqueue(ns, [{ topic: "sticky", payload: encoder.encode("g") }]))[0]!);
    expect({ big: [...new Set(big.map(owner))], second }).toEqual({ big: [big.map(owner)[0]!], second: first });
    expect(big.map(owner)[0]).not.toBe(first);
    await expect(OrqClusterClient.connect({ host: cluster.nodes[0]!.host, port: cluster.nodes[0]!.port, stickyItems: 0 })).rejects.toThrow("stickyItems");
  });

  test("a worker loop rides through a SIGKILL: every item acked exactly once", async () => {
    const cluster = await clusters.start({ label: "client_worker", nodes: 3, shards: 6, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    // One call per node in turn, so the node killed below holds a third of the items.
    const client = await connect(0, { stickyItems: 1 });
    const total = 60;
    const ids = new Set<string>();
    for (let i = 0; i < total; i++) for (const id of await client.enqueue(ns, [{ topic: "w", payload: encoder.encode(`w${i}`) }])) ids.add(id);
    expect(ids.size).toBe(total);
    const acked = new Map<string, number>();
    const events: WorkerEvent[] = [];
    let handled = 0;
    let killed: Promise<number> | null = null;
    const worker = client.work(
      {
        ns,
        topic: "w",
        concurrency: 4,
        leaseMs: 8_000,
        waitMs: 300,
        onEvent: (event) => {
          events.push(event);
          if (event.kind === "acked" && !event.stale) acked.set(event.delivery.id, (acked.get(event.delivery.id) ?? 0) + 1);
        },
      },
      async () => {
        handled++;
        // A third of the way through, n2 dies with leases of its own out.
        if (killed === null && handled >= 20) killed = clusters.current!.nodes[2]!.stop("SIGKILL");
      },
    );
    // An ack n2 committed but could not answer counts once `get` finds the item acked (awaitAcked), if it was answered stale.
    const answeredStale = (): Set<string> => new Set(events.flatMap((event) => (event.kind === "acked" && event.stale ? [event.delivery.id] : [])));
    const { ackedUnanswered, unacked } = await awaitAcked(client, ids, acked, answeredStale);
    await worker.stop();
    expect(killed).not.toBeNull();
    expect(await killed!).not.toBe(0);
    expect(unacked()).toEqual([]);
    expect([...ackedUnanswered].filter((id) => acked.has(id))).toEqual([]);
    expect([...acked.keys(), ...ackedUnanswered].sort()).toEqual([...ids].sort());
    expect([...acked.values()].every((count) => count === 1)).toBe(true);
  });

  test("the CLI routes too: a keyed enqueue, get and cancel through a node that owns none of it", async () => {
    const cluster = await clusters.start({ label: "client_cli", nodes: 2, shards: 4 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 4), "balanced");
    let key = "";
    for (let i = 0; key === ""; i++) if (map.owners[shardOfKey(ns, "c", `ck${i}`, 4)] === "n1") key = `ck${i}`;
    const server = `127.0.0.1:${cluster.nodes[0]!.port}`;
    const orq = async (...args: string[]) => {
      const proc = Bun.spawn([bunPath, mainPath, ...args, "--server", server], { stdout: "pipe", stderr: "pipe" });
      const code = await proc.exited;
      return { code, stdout: (await new Response(proc.stdout).text()).trim(), stderr: await new Response(proc.stderr).text() };
    };
    const enqueued = await orq("enqueue", "--topic", "c", "--payload", "hi", "--key", key);
    expect(enqueued.stderr).toBe("");
    expect(enqueued.code).toBe(0);
    expect(Number(enqueued.stdout.split(":")[0])).toBe(shardOfKey(ns, "c", key, 4));
    const got = await orq("get", enqueued.stdout, "--json");
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout).items[0]).toMatchObject({ id: enqueued.stdout, state: "ready" });
    expect((await orq("cancel", enqueued.stdout)).code).toBe(0);
  });

  test("SIGKILL under load: every acknowledged enqueue is acked once by the workers; no acked item comes back", async () => {
    const cluster = await clusters.start({ label: "client_load", nodes: 3, shards: 6, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    // One call per node in turn: the SIGKILLed node takes a third of the enqueues up to its death.
    const producer = await connect(0, { stickyItems: 1 });
    const consumer = await connect(1);
    const produced = new Set<string>();
    const acked = new Map<string, number>();
    const worker = consumer.work(
      {
        ns,
        topic: "load",
        concurrency: 8,
        leaseMs: 6_000,
        waitMs: 200,
        onEvent: (event) => {
          if (event.kind === "acked" && !event.stale) acked.set(event.delivery.id, (acked.get(event.delivery.id) ?? 0) + 1);
        },
      },
      async () => {},
    );
    let killed: Promise<number> | null = null;
    for (let i = 0; i < 200; i++) {
      if (i === 80) killed = cluster.nodes[2]!.stop("SIGKILL");
      // An enqueue the client could not get acknowledged (it gives up after its re-routes) is not counted.
      const ids = await producer.enqueue(ns, [{ topic: "load", payload: encoder.encode(`l${i}`) }]).catch(() => []);
      for (const id of ids) produced.add(id);
    }
    expect(await killed!).not.toBe(0);
    // An ack the killed node committed but could not answer counts once `get` finds the item acked (awaitAcked).
    const { ackedUnanswered, unacked } = await awaitAcked(producer, produced, acked, null);
    await worker.stop();
    expect(produced.size).toBeGreaterThan(150);
    expect(unacked()).toEqual([]);
    expect([...ackedUnanswered].filter((id) => acked.has(id))).toEqual([]);
    expect([...acked.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    // Nothing acked is ready or leased again anywhere (an emptied topic is not listed at all).
    const left = (await producer.topics(ns)).topics.find((t) => t.topic === "load") ?? { ready: 0, leased: 0 };
    expect(left).toMatchObject({ ready: 0, leased: 0 });
  });
});
