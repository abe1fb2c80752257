// Goal: a topic's own max_leased and rate hold across the cluster, as the
// contract's "Fair sharing and limits" says (never exceeded; docs/CLUSTER.md
// "Topic bounds across nodes"). Three real orq nodes on one real PostgreSQL.
//
// The cap: a topic with max_leased 5 and items on every shard; workers
// dequeue from every node, hold each lease a while (not acking) and then ack
// (or now and then nack) it. Meanwhile one node is SIGKILLed and restarted,
// twice (a different node each round). Every delivery is recorded as the
// interval its lease was held: from the lease's grant on its node
// (lease_expires_at_ms - lease_ms: the node's clock, this host's) to the
// moment its ack or nack was sent (or its lease ran out), which lies inside
// the lease as the node saw it. The leased count over time, swept over those
// intervals, never exceeds 5; after each kill the survivors take over and
// keep delivering, and the cap is reached again. Beside it, the nodes' own
// count is sampled all along: the sum over the live nodes of `topics`
// leased (asked of all at once), which covers what the interval count
// cannot see, the dead node's leases while their acks wait for the
// takeover (the new owner counts them); it never exceeds 5 either.
//
// The rate: a topic with rate 20 per 2 s, workers on every node taking as
// fast as they can; the deliveries up to any moment never exceed 20 plus the
// refill since the policy was set (the bucket is younger than that).
//
// Nothing asserts a timing: phases end on counts, every wait is bounded only
// to fail a broken run. Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/client.ts";
import { OrqClusterClient } from "../../src/client/cluster-client.ts";
import { shardOfKey } from "../../src/protocol/key-shard.ts";
import { ClusterHarness, clusterPerTest, retrying } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";
import { seededRandom } from "../support/seeded-random.ts";

const ns = "default";
const shards = 6;
/** Item leases: far longer than a hold, a takeover (1.5 s shard lease + 2 s), or an ack's re-routing. */
const leaseMs = 15_000;
/** Longest a phase may take before the test fails (a broken cluster, not a slow one). */
const phaseMsMax = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A lease as a worker saw it: from its grant to when it ended (its ack or nack was sent, or it ran out). */
interface Held {
  node: number;
  startMs: number;
  endMs: number;
}

/** The most leases held at once over the intervals (an end at t frees before a start at t: the node saw the end first). */
function maxHeld(held: readonly Held[], fromMs = Number.NEGATIVE_INFINITY): number {
  const events: Array<[number, number]> = [];
  for (const h of held) {
    if (h.endMs <= fromMs) continue;
    events.push([Math.max(h.startMs, fromMs), 1], [h.endMs, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, delta] of events) {
    now += delta;
    most = Math.max(most, now);
  }
  return most;
}

/** Keyed items of `topic` covering every shard (keys hash to shards: protocol/key-shard.ts). */
function itemsOnEveryShard(topic: string, count: number): Array<{ topic: string; key: string; leaseMs: number }> {
  const items = Array.from({ length: count }, (_, i) => ({ topic, key: `k${i}`, leaseMs }));
  const covered = new Set(items.map((item) => shardOfKey(ns, topic, item.key, shards)));
  expect(covered.size).toBe(shards);
  return items;
}

/** Wait until every node's engine holds the topic's own policy (policies reach every node within 1 s). */
async function policyEverywhere(cluster: ClusterHarness, topic: string, has: (policy: Record<string, unknown>) => boolean): Promise<void> {
  const deadline = performance.now() + phaseMsMax;
  for (let node = 0; node < cluster.nodes.length; node++) {
    const client = await cluster.client(node);
    for (;;) {
      const page = await client.policies(ns, topic);
      const own = page.policies.find((policy) => policy.group === undefined);
      if (own !== undefined && has(own as Record<string, unknown>)) break;
      if (performance.now() > deadline) throw new Error(`node ${node} never held the policy of ${topic}`);
      await sleep(50);
    }
  }
}

/** Every few ms, the sum over the live nodes of the topic's leased count (`topics`, asked of every node at once). */
class LeasedSampler {
  readonly samples: number[] = [];
  private stopped = false;
  private done: Promise<void> = Promise.resolve();
  private readonly clients = new Map<number, OrqClient>();

  constructor(
    private readonly cluster: ClusterHarness,
    private readonly topic: string,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
    for (const client of this.clients.values()) await client.close().catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const counts = await Promise.all(this.cluster.nodes.map((_, node) => this.leasedOn(node)));
      this.samples.push(counts.reduce((sum, n) => sum + n, 0));
      await sleep(10);
    }
  }

  /** The node's count, or 0 when it is down or refuses (rebuilding): a sample may undercount, never count twice. */
  private async leasedOn(node: number): Promise<number> {
    const process = this.cluster.nodes[node]!;
    try {
      if (!process.running) throw new Error("down");
      let client = this.clients.get(node);
      if (client === undefined) {
        client = await OrqClient.connect({ host: process.host, port: process.port, reconnect: false });
        this.clients.set(node, client);
      }
      const page = await client.topics(ns, { prefix: this.topic });
      return page.topics.find((t) => t.topic === this.topic)?.leased ?? 0;
    } catch {
      await this.clients.get(node)?.close().catch(() => undefined);
      this.clients.delete(node);
      return 0;
    }
  }
}

/** Worker loops against every node: dequeue one, hold it, then ack (or nack) it through the cluster client. */
class Workers {
  readonly held: Held[] = [];
  /** Deliveries by node, and the times they were granted. */
  readonly grants: Array<{ node: number; atMs: number }> = [];
  private stopped = false;
  private readonly loops: Array<Promise<void>> = [];
  readonly errors: unknown[] = [];

  constructor(
    private readonly cluster: ClusterHarness,
    private readonly acker: OrqClusterClient,
    private readonly topic: string,
    private readonly options: { perNode: number; count: number; holdMs: (random: () => number) => number; nackEvery: number; seed: number },
  ) {}

  start(): void {
    for (let node = 0; node < this.cluster.nodes.length; node++) {
      for (let w = 0; w < this.options.perNode; w++) this.loops.push(this.loop(node, seededRandom(this.options.seed * 100 + node * 10 + w)));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** Deliveries so far. */
  get delivered(): number {
    return this.grants.length;
  }

  /** Wait until `more` deliveries beyond `from` (bounded: a stalled cluster fails here). */
  async until(from: number, more: number, what: string): Promise<void> {
    const deadline = performance.now() + phaseMsMax;
    while (this.delivered < from + more) {
      if (this.errors.length > 0) throw this.errors[0];
      if (performance.now() > deadline) throw new Error(`${what}: only ${this.delivered - from} of ${more} deliveries`);
      await sleep(50);
    }
  }

  private async loop(node: number, random: () => number): Promise<void> {
    let client: OrqClient | null = null;
    let served = 0;
    while (!this.stopped) {
      const process = this.cluster.nodes[node]!;
      if (!process.running) {
        await client?.close().catch(() => undefined);
        client = null;
        await sleep(100);
        continue;
      }
      try {
        client ??= await OrqClient.connect({ host: process.host, port: process.port, reconnect: false });
        const deliveries = await client.dequeue(ns, { topics: [{ topic: this.topic, count: this.options.count }], waitMs: 300, leaseMs });
        for (const delivery of deliveries) {
          const startMs = delivery.leaseExpiresAtMs - leaseMs;
          this.grants.push({ node, atMs: startMs });
          served++;
          const holdMs = this.options.holdMs(random);
          if (holdMs > 0) await sleep(holdMs);
          const endMs = Math.min(Date.now(), delivery.leaseExpiresAtMs);
          this.held.push({ node, startMs, endMs });
          const nack = this.options.nackEvery > 0 && served % this.options.nackEvery === 0;
          try {
            if (nack) await this.acker.nack(ns, [{ receipt: delivery.receipt }]);
            else await this.acker.ack(ns, [delivery.receipt]);
          } catch (error) {
            // The lease runs out instead: its interval already ends before then. Anything but a routing failure is a test failure.
            if (!(error instanceof Error) || !/UNAVAILABLE|MOVED|DISCONNECTED|CLOSED|TIMEOUT/.test(String((error as { code?: string }).code ?? error.message))) this.errors.push(error);
          }
        }
      } catch {
        // The node died or refused (UNAVAILABLE while it takes shards on): reconnect after a pause.
        await client?.close().catch(() => undefined);
        client = null;
        await sleep(100);
      }
    }
    await client?.close().catch(() => undefined);
  }
}

describe.skipIf(!postgresAvailable())("a topic's own bounds across cluster nodes", () => {
  const clusters = clusterPerTest();

  test("max_leased 5 is never exceeded across three nodes while nodes are SIGKILLed and restarted; the survivors keep delivering up to it", async () => {
    const maxLeased = 5;
    const topic = "capped";
    const cluster = await clusters.start({ label: "topic-cap", nodes: 3, shards, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "three nodes share the shards");
    const first = cluster.nodes[0]!;
    const admin = await OrqClusterClient.connect({ host: first.host, port: first.port });
    try {
      await retrying(() => admin.policy(ns, topic, { maxLeased }));
      await policyEverywhere(cluster, topic, (policy) => policy.maxLeased === maxLeased);
      const items = itemsOnEveryShard(topic, 3_000);
      for (let at = 0; at < items.length; at += 500) await retrying(() => admin.enqueue(ns, items.slice(at, at + 500)));

      const workers = new Workers(cluster, admin, topic, { perNode: 3, count: 2, holdMs: (random) => 50 + Math.floor(random() * 450), nackEvery: 7, seed: 1 });
      const sampler = new LeasedSampler(cluster, topic);
      sampler.start();
      workers.start();
      await workers.until(0, 60, "before any kill");
      const rounds = [1, 2];
      const afterKill: Array<{ round: number; fromMs: number }> = [];
      for (const victim of rounds) {
        const live = [0, 1, 2].filter((n) => n !== victim).map((n) => `n${n}`);
        await cluster.nodes[victim]!.stop("SIGKILL");
        const killedAtMs = Date.now();
        const survivor = victim === 0 ? 1 : 0;
        await cluster.waitFor(survivor, ClusterHarness.balanced(live, shards), `the survivors of n${victim} own every shard`);
        const takenOverMs = Date.now();
        let from = workers.delivered;
        await workers.until(from, 60, `survivors after killing n${victim}`);
        // A dead node grants nothing (a lease granted just before the kill may still reach its worker).
        expect(workers.grants.filter((grant) => grant.node === victim && grant.atMs > killedAtMs)).toEqual([]);
        afterKill.push({ round: victim, fromMs: takenOverMs });
        // n<victim> comes back under its id (after its dead process's heartbeat ages) and gets its share again.
        await cluster.nodes[victim]!.restart({ signal: "SIGKILL" });
        await cluster.waitFor(survivor, ClusterHarness.balanced(["n0", "n1", "n2"], shards), `n${victim} rejoined`);
        from = workers.delivered;
        await workers.until(from, 60, `after n${victim} rejoined`);
      }
      await workers.stop();
      await sampler.stop();
      expect(workers.errors).toEqual([]);

      const sampled = Math.max(...sampler.samples);
      console.log(`topic cap: ${sampler.samples.length} samples of the nodes' leased counts, at most ${sampled}`);
      expect(sampled).toBeLessThanOrEqual(maxLeased);
      const most = maxHeld(workers.held);
      console.log(`topic cap: ${workers.held.length} leases held, at most ${most} at once (max_leased ${maxLeased}); per node ${[0, 1, 2].map((n) => workers.grants.filter((g) => g.node === n).length).join("/")}`);
      expect(most).toBeLessThanOrEqual(maxLeased);
      // The cap is reached (slots move to where the work is), and reached again after each takeover.
      expect(most).toBe(maxLeased);
      for (const { round, fromMs } of afterKill) {
        const after = maxHeld(workers.held, fromMs);
        console.log(`after killing n${round}: at most ${after} at once`);
        expect(after).toBe(maxLeased);
      }
      // Every node delivered some.
      for (const n of [0, 1, 2]) expect(workers.grants.some((g) => g.node === n)).toBe(true);
    } finally {
      await admin.close();
    }
  }, 240_000);

  test("a topic's rate: deliveries across three nodes never exceed its count plus the refill since the policy was set", async () => {
    const rate = { count: 20, perMs: 2_000 };
    const topic = "metered";
    const cluster = await clusters.start({ label: "topic-rate", nodes: 3, shards, leaseMs: 1500 });
    await cluster.waitFor(0, ClusterHarness.balanced(["n0", "n1", "n2"], shards), "three nodes share the shards");
    const first = cluster.nodes[0]!;
    const admin = await OrqClusterClient.connect({ host: first.host, port: first.port });
    try {
      await retrying(() => admin.enqueue(ns, itemsOnEveryShard(topic, 600)));
      // Before the policy: its bucket in the database is made by the first draw, after this.
      const setAtMs = Date.now();
      await retrying(() => admin.policy(ns, topic, { rate }));
      await policyEverywhere(cluster, topic, (policy) => (policy.rate as { count?: number } | undefined)?.count === rate.count);
      const workers = new Workers(cluster, admin, topic, { perNode: 2, count: 5, holdMs: () => 0, nackEvery: 0, seed: 2 });
      workers.start();
      // 60 deliveries: the burst of 20 and 4 s of refill, at the least.
      await workers.until(0, 60, "rate-bound deliveries");
      await workers.stop();
      expect(workers.errors).toEqual([]);
      const grants = workers.grants.map((g) => g.atMs).sort((a, b) => a - b);
      let worst = Number.NEGATIVE_INFINITY;
      grants.forEach((atMs, i) => {
        const allowed = rate.count + ((atMs - setAtMs) * rate.count) / rate.perMs;
        worst = Math.max(worst, i + 1 - allowed);
        expect(i + 1).toBeLessThanOrEqual(allowed);
      });
      const spanMs = (grants.at(-1) ?? setAtMs) - setAtMs;
      console.log(`topic rate: ${grants.length} deliveries in ${spanMs} ms from the policy (bound ${rate.count} + refill = ${Math.floor(rate.count + (spanMs * rate.count) / rate.perMs)}); closest to the bound by ${(-worst).toFixed(1)}; per node ${[0, 1, 2].map((n) => workers.grants.filter((g) => g.node === n).length).join("/")}`);
    } finally {
      await admin.close();
    }
  }, 120_000);
});
