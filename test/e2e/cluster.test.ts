// Goal: real orq nodes on one real PostgreSQL behave as the contract's
// "Cluster mode" says: one node serves every shard and reports the map in
// hello and the `cluster` op; three nodes share the shards evenly; a request
// for another node's shard is answered MOVED naming the owner (nothing done),
// and keyed items land on the shard their key hashes to; a SIGKILLed node's
// shards are taken over and nothing acknowledged comes back; a SIGTERMed node
// hands its shards over; a joining node gets its share; a receipt stays good
// when its shard moves; an `after` dependency on another node's shard holds
// its dependent until acked (dead when cancelled). Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { shardOfKey } from "../../src/protocol/key-shard.ts";
import { OrqError } from "../../src/client/orq-error.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "default";
const encoder = new TextEncoder();

async function moved(attempt: Promise<unknown>): Promise<OrqError> {
  const error = await attempt.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OrqError);
  return error as OrqError;
}

describe.skipIf(!postgresAvailable())("cluster mode on PostgreSQL", () => {
  const clusters = clusterPerTest();

  test("one node serves every shard: the map in hello and `cluster`, and a full enqueue, dequeue, ack", async () => {
    const cluster = await clusters.start({ label: "one", nodes: 1, shards: 4 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0"], 4), "n0 owns all 4 shards");
    expect(map.node_id).toBe("n0");
    expect(map.nodes).toEqual([{ node_id: "n0", addr: `127.0.0.1:${cluster.nodes[0]!.port}` }]);
    expect(map.map_version).toBeGreaterThanOrEqual(4);
    const client = await cluster.client(0);
    const hello = (await client.request("hello", { protocol: 1 })) as { node_id: string; cluster: { owners: string[] } };
    expect(hello.node_id).toBe("n0");
    expect(hello.cluster.owners).toEqual(["n0", "n0", "n0", "n0"]);
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(...(await retrying(() => client.enqueue(ns, [{ topic: "t", payload: encoder.encode(`p${n}`) }]))));
    // Enqueues go round the shards, each id naming its shard.
    expect(new Set(ids.map((id) => id.split(":")[0])).size).toBe(4);
    const deliveries = await client.dequeue(ns, { topics: [{ topic: "t", count: 10 }] });
    expect(deliveries.map((d) => d.id).sort()).toEqual([...ids].sort());
    expect((await client.ack(ns, deliveries.map((d) => d.receipt))).acked).toBe(5);
    expect(await client.dequeue(ns, { topics: [{ topic: "t", count: 10 }] })).toEqual([]);
  });

  test("three nodes share the shards evenly; MOVED names the owner and does nothing; keyed items go to their key's shard", async () => {
    const cluster = await clusters.start({ label: "three", nodes: 3, shards: 8 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 8), "three nodes own 8 shards, at most 3 each");
    const c0 = await cluster.client(0);
    // A key whose shard n0 does not own: the enqueue is MOVED to the owner, which takes it.
    let key = "";
    for (let i = 0; key === ""; i++) if (map.owners[shardOfKey(ns, "t", `k${i}`, 8)] !== "n0") key = `k${i}`;
    const shard = shardOfKey(ns, "t", key, 8);
    const owner = map.owners[shard]!;
    const error = await moved(c0.enqueue(ns, [{ topic: "t", payload: encoder.encode("x"), key }]));
    expect(error.code).toBe("MOVED");
    expect(error.details).toMatchObject({ shard, nodeId: owner, addr: map.nodes.find((n) => n.node_id === owner)!.addr });
    const ownerIndex = Number(owner.slice(1));
    const cOwner = await cluster.client(ownerIndex);
    const [id] = await retrying(() => cOwner.enqueue(ns, [{ topic: "t", payload: encoder.encode("x"), key }]));
    expect(id?.startsWith(`${shard}:`)).toBe(true);
    // The same key again answers the same id (unique across the cluster).
    expect(await cOwner.enqueue(ns, [{ topic: "t", payload: encoder.encode("y"), key }])).toEqual([id!]);
    // get and cancel of that id elsewhere: MOVED, nothing done.
    expect((await moved(c0.get(ns, [id!]))).code).toBe("MOVED");
    expect((await moved(c0.cancel(ns, [id!]))).code).toBe("MOVED");
    expect((await cOwner.get(ns, [id!]))[0]).toMatchObject({ id, state: "ready" });
    // A plain item goes to a shard of the node asked.
    const [plain] = await retrying(() => c0.enqueue(ns, [{ topic: "t", payload: encoder.encode("z") }]));
    expect(map.owners[Number(plain!.split(":")[0])]).toBe("n0");
  });

  test("SIGKILL: the dead node's shards are taken over; acked items never come back and every other item is delivered", async () => {
    const cluster = await clusters.start({ label: "kill", nodes: 3, shards: 6, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    const c2 = await cluster.client(2);
    const ids = await retrying(() => c2.enqueue(ns, Array.from({ length: 20 }, (_, i) => ({ topic: "k", payload: encoder.encode(`i${i}`), leaseMs: 1000 }))));
    // Ack half of them through n2 (all on n2's shards), lease the rest and let n2 die holding those leases.
    const first = await c2.dequeue(ns, { topics: [{ topic: "k", count: 10 }] });
    expect(first.length).toBe(10);
    expect((await c2.ack(ns, first.map((d) => d.receipt))).acked).toBe(10);
    const leased = await c2.dequeue(ns, { topics: [{ topic: "k", count: 10 }] });
    expect(leased.length).toBe(10);
    await cluster.nodes[2]!.stop("SIGKILL");
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 6), "n0 and n1 own every shard");
    // Drain from both survivors until every unacked item came back once its item lease ran out.
    const seen = new Map<string, number>();
    const clients = [await cluster.client(0), await cluster.client(1)];
    while (seen.size < 10) {
      for (const client of clients) {
        for (const d of await retrying(() => client.dequeue(ns, { topics: [{ topic: "k", count: 10 }], waitMs: 200 }))) {
          seen.set(d.id, (seen.get(d.id) ?? 0) + 1);
          expect((await retrying(() => client.ack(ns, [d.receipt]))).acked).toBe(1);
        }
      }
    }
    const acked = new Set(first.map((d) => d.id));
    expect([...seen.keys()].sort()).toEqual(ids.filter((id) => !acked.has(id)).sort());
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
  });

  test("SIGTERM hands the shards over at once; a joining node gets its share; a receipt stays good across the move", async () => {
    const cluster = await clusters.start({ label: "term", nodes: 2, shards: 4, leaseMs: 60_000 });
    const map = await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 4), "balanced");
    const c1 = await cluster.client(1);
    const [id] = await retrying(() => c1.enqueue(ns, [{ topic: "m", payload: encoder.encode("move me"), leaseMs: 120_000 }]));
    const [delivery] = await c1.dequeue(ns, { topics: [{ topic: "m", count: 1 }] });
    expect(delivery?.id).toBe(id);
    expect(map.owners[Number(id!.split(":")[0])]).toBe("n1");
    // With a 60 s lease, only a handover can move n1's shards within this test.
    expect(await cluster.nodes[1]!.stop("SIGTERM")).toBe(0);
    await cluster.waitFor(0, ClusterHarness.balanced(["n0"], 4), "n0 owns every shard");
    const c0 = await cluster.client(0);
    expect((await retrying(() => c0.ack(ns, [delivery!.receipt]))).acked).toBe(1);
    expect((await c0.get(ns, [id!]))[0]).toMatchObject({ id, state: "ended", outcome: "acked" });
    // A new node joins: n0 gives up half.
    await cluster.addNode();
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n2"], 4), "n0 and n2 two shards each");
  });

  test("SIGSTOP past the lease, then SIGCONT: the paused node delivers nothing it lost and changes nothing; the new owner's leases stand", async () => {
    const cluster = await clusters.start({ label: "stop", nodes: 3, shards: 6, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "balanced");
    const c2 = await cluster.client(2);
    const ids = await retrying(() => c2.enqueue(ns, Array.from({ length: 6 }, (_, i) => ({ topic: "s", payload: encoder.encode(`s${i}`) }))));
    const paused = cluster.nodes[2]!;
    process.kill(paused.pid!, "SIGSTOP");
    try {
      await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 6), "n0 and n1 own every shard");
      // The new owners deliver every item.
      const deliveries = [];
      for (const index of [0, 1]) {
        const client = await cluster.client(index);
        deliveries.push(...(await retrying(() => client.dequeue(ns, { topics: [{ topic: "s", count: 10 }], leaseMs: 120_000 }))));
      }
      expect(deliveries.map((d) => d.id).sort()).toEqual([...ids].sort());
      process.kill(paused.pid!, "SIGCONT");
      // Back, n2 hands out none of those items, whatever it answers, and cannot end them.
      const fromPaused = await c2.dequeue(ns, { topics: [{ topic: "s", count: 10 }] }).catch((error: unknown) => error);
      if (Array.isArray(fromPaused)) expect(fromPaused).toEqual([]);
      else expect(["MOVED", "UNAVAILABLE"]).toContain((fromPaused as OrqError).code);
      const cancel = await c2.cancel(ns, [ids[0]!]).catch((error: unknown) => error);
      expect(cancel).toBeInstanceOf(OrqError);
      // Every lease the new owners granted is still good.
      let acked = 0;
      for (const d of deliveries) {
        // n2 is back and may be taking shards again: follow MOVED to the owner.
        let index = 0;
        for (let hops = 0; hops < 10; hops++) {
          const client = await cluster.client(index);
          const result = await retrying(() => client.ack(ns, [d.receipt])).catch((error: unknown) => error);
          if (result instanceof OrqError && result.code === "MOVED") {
            index = Number(result.details.nodeId!.slice(1));
            continue;
          }
          acked += (result as { acked: number }).acked;
          break;
        }
      }
      expect(acked).toBe(6);
    } finally {
      process.kill(paused.pid!, "SIGCONT");
    }
  });

  test("`after` across nodes: an item waits for a dependency on another node's shard and becomes ready after its ack, dead after its cancel", async () => {
    const cluster = await clusters.start({ label: "after", nodes: 2, shards: 4, leaseMs: 60_000 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], 4), "balanced");
    const c0 = await cluster.client(0);
    const c1 = await cluster.client(1);
    const [local] = await retrying(() => c0.enqueue(ns, [{ topic: "x", payload: encoder.encode("local") }]));
    const [remote, remoteToCancel] = await retrying(() =>
      c1.enqueue(ns, [
        { topic: "y", payload: encoder.encode("remote") },
        { topic: "y", payload: encoder.encode("remote, cancelled") },
      ]),
    );
    // Each item lives on its first dependency's shard (n0's); the second dependency is n1's.
    const [waiter, doomed] = await retrying(() =>
      c0.enqueue(ns, [
        { topic: "z", payload: encoder.encode("waits"), after: [local!, remote!] },
        { topic: "z", payload: encoder.encode("dies"), after: [local!, remoteToCancel!] },
      ]),
    );
    expect(waiter!.split(":")[0]).toBe(local!.split(":")[0]);
    const [localDelivery] = await c0.dequeue(ns, { topics: [{ topic: "x", count: 1 }] });
    expect((await c0.ack(ns, [localDelivery!.receipt])).acked).toBe(1);
    expect((await c0.get(ns, [waiter!]))[0]).toMatchObject({ state: "waiting" });
    const [remoteDelivery] = await c1.dequeue(ns, { topics: [{ topic: "y", count: 1 }] });
    expect(remoteDelivery?.id).toBe(remote);
    expect((await c1.ack(ns, [remoteDelivery!.receipt])).acked).toBe(1);
    expect((await c1.cancel(ns, [remoteToCancel!])).cancelled).toBe(1);
    // n0 learns of both ends from the database (it polls every 500 ms): poll its view, not the clock.
    const states = async () => (await c0.get(ns, [waiter!, doomed!])).map((s) => (s as { state: string }).state);
    for (let i = 0; i < 200 && (await states()).join() !== "ready,dead"; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await states()).toEqual(["ready", "dead"]);
    expect((await c0.get(ns, [doomed!]))[0]).toMatchObject({ deadReason: `dependency ${remoteToCancel} cancelled` });
    const [ready] = await c0.dequeue(ns, { topics: [{ topic: "z", count: 1 }] });
    expect(ready?.id).toBe(waiter);
  });
});
