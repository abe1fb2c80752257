// Goal: when shards move between real orq nodes on a real PostgreSQL, only
// the moving shards stop serving. One node holds 20,000 items over 8 shards
// while clients keep enqueueing (keyed, so each request names one shard),
// reading and dequeueing and acking on it; a second node joins (half the
// shards move to it), then leaves with SIGTERM (they move back). Every answer
// the first node gave for a shard it kept throughout is never UNAVAILABLE
// nor MOVED, its dequeues never fail, and a dequeue parked on it before the
// join is still parked after it (then served by a new item), not answered
// empty.

import { describe, expect, test } from "bun:test";
import { OrqError } from "../../src/client/orq-error.ts";
import type { OrqClient } from "../../src/client/client.ts";
import { shardOfKey } from "../../src/protocol/key-shard.ts";
import { ClusterHarness, clusterPerTest, type WireMap } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "moves";
const shards = 8;
const encoder = new TextEncoder();

/** A fresh key of topic `topic` that lands on `shard`. */
function keyOn(topic: string, shard: number, counter: { n: number }): string {
  for (;;) {
    const key = `k${counter.n++}`;
    if (shardOfKey(ns, topic, key, shards) === shard) return key;
  }
}

interface Answer {
  shard: number;
  op: string;
  code: string;
  atMs: number;
}

/** Load on node 0 until stopped: per shard a keyed enqueue and a get of it; beside, dequeues and acks. Every answer is recorded. */
function load(client: OrqClient, answers: Answer[]): { stop(): Promise<void> } {
  let stopped = false;
  const counter = { n: 1_000_000 };
  const record = (shard: number, op: string, error: unknown): void => {
    if (error !== null && !(error instanceof OrqError)) throw error;
    answers.push({ shard, op, code: error === null ? "ok" : (error as OrqError).code, atMs: performance.now() });
  };
  const perShard = async (shard: number): Promise<void> => {
    while (!stopped) {
      try {
        const [id] = await client.enqueue(ns, [{ topic: "load", key: keyOn("load", shard, counter), payload: encoder.encode("x") }]);
        record(shard, "enqueue", null);
        await client.get(ns, [id!]);
        record(shard, "get", null);
      } catch (error) {
        record(shard, "enqueue/get", error);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const worker = async (): Promise<void> => {
    while (!stopped) {
      try {
        const deliveries = await client.dequeue(ns, { topics: [{ topic: "load", count: 20 }], leaseMs: 60_000 });
        record(-1, "dequeue", null);
        for (const delivery of deliveries) {
          const shard = Number(delivery.id.split(":")[0]);
          try {
            await client.ack(ns, [delivery.receipt]);
            record(shard, "ack", null);
          } catch (error) {
            record(shard, "ack", error);
          }
        }
      } catch (error) {
        record(-1, "dequeue", error);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const running = [...Array.from({ length: shards }, (_, shard) => perShard(shard)), worker()];
  return {
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

describe.skipIf(!postgresAvailable())("shards move one at a time", () => {
  const clusters = clusterPerTest();

  test("a join and a leave under load: the shards the first node keeps never answer UNAVAILABLE, and its parked dequeue stays parked", async () => {
    const cluster = await clusters.start({ label: "moves", nodes: 1, shards, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0"], shards), "n0 owns every shard");
    const c0 = await cluster.client(0);
    for (let batch = 0; batch < 20; batch++) {
      await c0.enqueue(ns, Array.from({ length: 1000 }, (_, i) => ({ topic: "stock", key: `s${batch}-${i}`, payload: encoder.encode("y") })));
    }
    const parkedClient = await cluster.client(0);
    const parked = parkedClient.dequeue(ns, { topics: [{ topic: "parked", count: 1 }], waitMs: 25_000 }, { timeoutMs: 30_000 });
    let parkedAnswered = false;
    void parked.then(() => (parkedAnswered = true));

    // Who owns what, sampled as the load runs: a shard node 0 owned in every sample never moved.
    const samples: WireMap[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await cluster.map(0));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const answers: Answer[] = [];
    const loader = load(await cluster.client(0), answers);

    await cluster.addNode();
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1"], shards), "n0 and n1 four shards each");
    await cluster.waitFor(1, ClusterHarness.balanced(["n0", "n1"], shards), "n1 sees the same");
    // n1 serves its shards once loaded: a get there answers.
    const c1 = await cluster.client(1);
    const joinedMap = await cluster.map(0);
    const movedShard = joinedMap.owners.indexOf("n1");
    for (let tries = 0; ; tries++) {
      try {
        await c1.enqueue(ns, [{ topic: "load", key: keyOn("load", movedShard, { n: 0 }), payload: encoder.encode("z") }]);
        break;
      } catch (error) {
        if (!(error instanceof OrqError) || error.code !== "UNAVAILABLE" || tries > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(parkedAnswered).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(await cluster.nodes[1]!.stop("SIGTERM")).toBe(0);
    await cluster.waitFor(0, ClusterHarness.balanced(["n0"], shards), "n0 owns every shard again");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await loader.stop();
    sampling = false;
    await sampler;

    // The dequeue parked before the join was never answered; an item now serves it.
    expect(parkedAnswered).toBe(false);
    await c0.enqueue(ns, [{ topic: "parked", payload: encoder.encode("p") }]);
    expect((await parked).length).toBe(1);

    const kept = Array.from({ length: shards }, (_, shard) => shard).filter((shard) => samples.every((map) => map.owners[shard] === "n0"));
    const moved = Array.from({ length: shards }, (_, shard) => shard).filter((shard) => !kept.includes(shard));
    expect(kept.length).toBe(shards / 2);
    const keptAnswers = answers.filter((answer) => kept.includes(answer.shard) || answer.shard === -1);
    expect(keptAnswers.filter((answer) => answer.code === "ok").length).toBeGreaterThan(100);
    expect(keptAnswers.filter((answer) => answer.code !== "ok")).toEqual([]);
    // The moving shards did answer MOVED or UNAVAILABLE at times: the load reached them while they moved.
    expect(answers.some((answer) => moved.includes(answer.shard) && answer.code !== "ok")).toBe(true);
  });
});
