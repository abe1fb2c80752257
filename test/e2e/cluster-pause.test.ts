// Goal: `pause` and `resume` act on the whole cluster, as the contract's
// "Cluster mode" says: a pause sent to one node stops deliveries of that topic
// on every other running node, a resume sent to a third node lifts it
// everywhere, a timed pause ends everywhere at its end, and a resume sent to
// a node that may not have seen the pause yet still lifts it. Three real
// nodes on one real PostgreSQL; every wait polls a condition with a deadline
// (the nodes poll the database every 250 ms; nothing here asserts a timing).
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import type { OrqClient } from "../../src/client/client.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const ns = "default";
const topic = "jobs";
const encoder = new TextEncoder();
/** Longest a condition is polled for (10 s): far past the contract's 1 s, so a noisy machine does not fail the test, while a pause that never arrives does. */
const conditionWaitMs = 10_000;

/** Poll `check` until it gives a value other than undefined; fail naming `what` at the deadline. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + conditionWaitMs;
  while (performance.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
}

/** The topic's pause as a node reports it in `topics`: undefined when it does not list it paused. */
async function pauseSeen(client: OrqClient): Promise<{ pausedUntilMs: number | null } | undefined> {
  const entry = (await client.topics(ns)).topics.find((t) => t.topic === topic);
  return entry?.paused === true ? { pausedUntilMs: entry.pausedUntilMs ?? null } : undefined;
}

async function unpaused(client: OrqClient): Promise<true | undefined> {
  return (await pauseSeen(client)) === undefined ? true : undefined;
}

describe.skipIf(!postgresAvailable())("pause and resume across cluster nodes", () => {
  const clusters = clusterPerTest();

  test("a pause through A stops B's deliveries, a resume through C lets B deliver; a timed pause ends on every node", async () => {
    const cluster = await clusters.start({ label: "pause", nodes: 3, shards: 6, leaseMs: 60_000 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "three nodes share the shards");
    const [a, b, c] = [await cluster.client(0), await cluster.client(1), await cluster.client(2)];
    // Plain items go to a shard of the node asked: these are all B's.
    const items = Array.from({ length: 20 }, (_, i) => ({ topic, payload: encoder.encode(`item ${i}`) }));
    await retrying(() => b.enqueue(ns, items));

    // Untimed pause through A: B (which was not asked) stops delivering.
    expect(await a.pause(ns, topic)).toEqual({ pausedUntilMs: null });
    expect(await eventually("B lists the topic paused", () => pauseSeen(b))).toEqual({ pausedUntilMs: null });
    expect(await b.dequeue(ns, { topics: [{ topic, count: 5 }] })).toEqual([]);
    // A parked dequeue on B is not served while paused; the resume through C serves it.
    await eventually("C lists the topic paused", () => pauseSeen(c));
    const parked = b.dequeue(ns, { topics: [{ topic, count: 1 }], waitMs: conditionWaitMs });
    expect(await c.resume(ns, topic)).toEqual({ resumed: true });
    const [woken] = await parked;
    expect(woken?.topic).toBe(topic);
    for (const client of [a, b, c]) await eventually("every node lists the topic unpaused", () => unpaused(client));
    expect(await b.dequeue(ns, { topics: [{ topic, count: 1 }] })).toHaveLength(1);

    // A timed pause through C reaches B with its end, and ends there by itself.
    const { pausedUntilMs } = await c.pause(ns, topic, { forMs: 1_500 });
    expect(pausedUntilMs).not.toBeNull();
    expect(await eventually("B has the timed pause", async () => ((await pauseSeen(b))?.pausedUntilMs === pausedUntilMs ? true : undefined))).toBe(true);
    // A dequeue parked on B during the pause is served by B's own deadline for the end it polled.
    const delivered = await b.dequeue(ns, { topics: [{ topic, count: 1 }], waitMs: conditionWaitMs });
    expect(delivered[0]?.topic).toBe(topic);
    expect(Date.now()).toBeGreaterThanOrEqual(pausedUntilMs!);
    for (const client of [a, b, c]) await eventually("every node lists the timed pause over", () => unpaused(client));
  });

  test("a resume through a node that may not have seen the pause yet still lifts it everywhere; re-pausing replaces a timed pause's end", async () => {
    const cluster = await clusters.start({ label: "pause2", nodes: 3, shards: 6, leaseMs: 60_000 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], 6), "three nodes share the shards");
    const [a, b, c] = [await cluster.client(0), await cluster.client(1), await cluster.client(2)];
    await retrying(() => b.enqueue(ns, [{ topic, payload: encoder.encode("one") }]));

    // Pause through A and resume through C at once: C may or may not have polled it; either way it ends.
    await a.pause(ns, topic);
    await c.resume(ns, topic);
    for (const client of [a, b, c]) await eventually("every node lists the topic unpaused", () => unpaused(client));

    // A short timed pause through B, replaced at once through A by a pause until resume:
    // B's end (its deadline still set when it fires, if B has not polled A's pause yet) must not delete A's pause.
    const { pausedUntilMs: shortEnd } = await b.pause(ns, topic, { forMs: 300 });
    await a.pause(ns, topic);
    for (const client of [a, b, c]) {
      expect(await eventually("every node holds the pause until resume", async () => ((await pauseSeen(client))?.pausedUntilMs === null ? true : undefined))).toBe(true);
    }
    await eventually("the replaced end has passed", async () => (Date.now() > shortEnd! ? true : undefined));
    for (const client of [a, b, c]) expect(await pauseSeen(client)).toEqual({ pausedUntilMs: null });
    expect(await b.dequeue(ns, { topics: [{ topic, count: 1 }] })).toEqual([]);
    expect(await c.resume(ns, topic)).toEqual({ resumed: true });
    const delivered = await eventually("B delivers after the resume", async () => {
      const got = await b.dequeue(ns, { topics: [{ topic, count: 1 }] });
      return got.length > 0 ? got : undefined;
    });
    expect(delivered).toHaveLength(1);
  });
});
