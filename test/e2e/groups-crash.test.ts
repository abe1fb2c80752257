// Goal: group bounds, policies and group pauses hold across crashes of a
// real `orq serve`. One topic has a "*" max_leased of 2 (and a group "vip"
// with its own policy: weight 3, max_leased 2) and a topic max_leased of 5;
// seven groups and the nil group hold a backlog. A worker dequeues, acks,
// nacks and keeps some leases without acking (so the bounds are reached and
// leases run out), a producer adds items, and the server is SIGKILLed at a
// seeded random moment (sometimes with requests in flight) and restarted on
// its data dir, several times. After every dequeue: no group holds more than
// 2 of the receipts the worker has (leases it knows are live) and the topic
// no more than 5, and `groups` shows no group above 2 leased nor the topic
// above 5. After every restart: `policies` and the group pauses (one until
// resume, one timed) read back as they were last set, and a pause or policy
// changed during the run reads back changed. Finally every group is resumed
// and the topic drains.
//
// The seed is printed; replay with ORQ_GROUPS_CRASH_SEED=<seed>.

import { afterAll, expect, test } from "bun:test";
import { OrqClient, type Delivery } from "../../src/client/index.ts";
import type { Policy } from "../../src/client/types.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { ServerProcess } from "../support/server-process.ts";

const seed = process.env.ORQ_GROUPS_CRASH_SEED === undefined ? Math.floor(Math.random() * 1_000_000) : Number(process.env.ORQ_GROUPS_CRASH_SEED);
const ns = "gcrash";
const topic = "jobs";
const groupMax = 2;
const topicMax = 5;
const groups: Array<string | null> = ["g0", "g1", "g2", "g3", "g4", "vip", null];
const rounds = 5;
const opsPerRound = 60;
const leaseMs = 700;

let server: ServerProcess | null = null;
let client: OrqClient | null = null;

afterAll(async () => {
  await client?.close().catch(() => {});
  await server?.cleanup();
});

/** The receipts the worker holds: delivered, not acked or nacked, lease not run out (as far as it knows). */
class Held {
  private readonly byReceipt = new Map<string, { group: string | null; expiresAtMs: number }>();

  add(d: Delivery): void {
    this.byReceipt.set(d.receipt, { group: d.group ?? null, expiresAtMs: d.leaseExpiresAtMs });
  }

  drop(receipt: string): void {
    this.byReceipt.delete(receipt);
  }

  /** Leases that may have run out by nowMs no longer count (the server may have ended them). */
  prune(nowMs: number): void {
    for (const [receipt, held] of this.byReceipt) if (held.expiresAtMs <= nowMs) this.byReceipt.delete(receipt);
  }

  /** A restart: receipts of the old boot are stale, whatever their lease. */
  clear(): void {
    this.byReceipt.clear();
  }

  receipts(): string[] {
    return [...this.byReceipt.keys()];
  }

  countByGroup(): Map<string | null, number> {
    const counts = new Map<string | null, number>();
    for (const held of this.byReceipt.values()) counts.set(held.group, (counts.get(held.group) ?? 0) + 1);
    return counts;
  }

  get size(): number {
    return this.byReceipt.size;
  }
}

test(`group bounds, policies and group pauses survive SIGKILL and restart (seed ${seed})`, async () => {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  console.log(`groups crash test seed ${seed} (replay: ORQ_GROUPS_CRASH_SEED=${seed} bun test test/e2e/groups-crash.test.ts)`);

  server = await ServerProcess.start({ args: ["--shards", "4"] });
  client = await OrqClient.connect({ port: server.port, clientName: "groups-crash" });
  const c = () => client as OrqClient;

  // Policies and pauses as last set: what every restart must read back.
  let vipWeight = 3;
  const expectedPolicies = (): Policy[] => [{ maxLeased: topicMax }, { group: "*", maxLeased: groupMax }, { group: "vip", weight: vipWeight, maxLeased: groupMax }];
  await c().policy(ns, topic, { maxLeased: topicMax });
  await c().policy(ns, topic, { group: "*", maxLeased: groupMax });
  await c().policy(ns, topic, { group: "vip", weight: vipWeight, maxLeased: groupMax });
  /** Paused groups: until resume (null) or until a time. */
  const pauses = new Map<string, number | null>();
  /** Paused from the start and never resumed: none of their items is ever delivered. */
  const neverDelivered = new Set(["held"]);
  pauses.set("held", null);
  await c().pause(ns, topic, { group: "held" });
  const timed = await c().pause(ns, topic, { group: "later", forMs: 3_600_000 });
  pauses.set("later", timed.pausedUntilMs);

  let enqueued = 0;
  const enqueueSome = async (n: number) => {
    const items = Array.from({ length: n }, () => ({ topic, group: pick([...groups, "held", "later"]) ?? undefined, priority: pick([0, 0, 1]) }));
    await c().enqueue(ns, items);
    enqueued += n;
  };
  await enqueueSome(60);

  const held = new Held();
  let deliveries = 0;
  let passedOverSeen = false;
  /** The most leases the server showed for one group, and for the topic. */
  let groupPeak = 0;
  let topicPeak = 0;

  const checkServerCounts = async (when: string) => {
    const page = await c().groups(ns, topic, { limit: 1000 });
    let leased = 0;
    for (const g of page.groups) {
      leased += g.leased;
      groupPeak = Math.max(groupPeak, g.leased);
      expect(`${when}: group ${String(g.group)} leased ${g.leased}`).toBe(`${when}: group ${String(g.group)} leased ${Math.min(g.leased, groupMax)}`);
      const paused = g.group === null ? undefined : pauses.get(g.group);
      expect(`${when}: group ${String(g.group)} paused ${g.paused} until ${g.pausedUntilMs}`).toBe(
        `${when}: group ${String(g.group)} paused ${paused !== undefined} until ${paused === undefined || paused === null ? undefined : paused}`,
      );
      // A group paused before any delivery never holds a lease (one paused later keeps the leases it had).
      if (g.group !== null && neverDelivered.has(g.group)) expect(`${when}: ${g.group} leased ${g.leased}`).toBe(`${when}: ${g.group} leased 0`);
    }
    expect(`${when}: topic leased ${leased}`).toBe(`${when}: topic leased ${Math.min(leased, topicMax)}`);
    topicPeak = Math.max(topicPeak, leased);
    // A paused group with no items is still listed, paused.
    for (const [name, untilMs] of pauses) {
      const entry = page.groups.find((g) => g.group === name);
      expect(`${when}: ${name} ${entry?.paused} ${entry?.pausedUntilMs}`).toBe(`${when}: ${name} true ${untilMs ?? undefined}`);
    }
  };

  const checkDurableState = async (when: string) => {
    expect((await c().policies(ns, topic)).policies).toEqual(expectedPolicies());
    await checkServerCounts(when);
  };

  const workerStep = async () => {
    const roll = r();
    if (roll < 0.5) {
      const count = 1 + Math.floor(r() * 6);
      const sentAt = Date.now();
      held.prune(sentAt);
      const got = await c().dequeue(ns, { topics: [{ topic, count }], leaseMs });
      const receivedAt = Date.now();
      // Receipts still live when the reply came were live while the server delivered.
      held.prune(receivedAt);
      for (const d of got) {
        expect(`${d.id} from group ${d.group} paused ${d.group !== undefined && pauses.has(d.group)}`).toBe(`${d.id} from group ${d.group} paused false`);
        held.add(d);
      }
      deliveries += got.length;
      if (got.length < count) passedOverSeen = true;
      for (const [group, n] of held.countByGroup()) expect(`group ${String(group)} holds ${n}`).toBe(`group ${String(group)} holds ${Math.min(n, groupMax)}`);
      expect(held.size).toBeLessThanOrEqual(topicMax);
      await checkServerCounts("after a dequeue");
    } else if (roll < 0.7 && held.size > 0) {
      const receipt = pick(held.receipts());
      held.drop(receipt);
      await c().ack(ns, [receipt]);
    } else if (roll < 0.8 && held.size > 0) {
      const receipt = pick(held.receipts());
      held.drop(receipt);
      await c().nack(ns, [{ receipt, delayMs: pick([0, 50, 200]) }]);
    } else if (roll < 0.9) {
      await enqueueSome(1 + Math.floor(r() * 4));
    } else {
      // Keep the leases held: let some run out.
      await Bun.sleep(pick([50, 200, leaseMs]));
    }
  };

  for (let round = 0; round < rounds; round++) {
    const killAfter = Math.floor(r() * opsPerRound);
    for (let step = 0; step < opsPerRound; step++) {
      if (step === killAfter) {
        // Change a pause and a policy mid-run: the restart must read the new ones back.
        if (round === 1) {
          await c().resume(ns, topic, { group: "later" });
          pauses.delete("later");
          const until = await c().pause(ns, topic, { group: "g4", forMs: 3_600_000 });
          pauses.set("g4", until.pausedUntilMs);
        }
        if (round === 2) {
          vipWeight = 5;
          await c().policy(ns, topic, { group: "vip", weight: vipWeight, maxLeased: groupMax });
        }
        if (round === 3) {
          await c().resume(ns, topic, { group: "g4" });
          pauses.delete("g4");
        }
      }
      await workerStep();
    }
    // Sometimes with requests in flight: their replies never come.
    const inFlight = r() < 0.5 ? [c().dequeue(ns, { topics: [{ topic, count: 3 }], leaseMs }), c().enqueue(ns, [{ topic, group: "g0" }])] : [];
    for (const p of inFlight) (p as Promise<unknown>).catch(() => {});
    await c().close().catch(() => {});
    await server.restart({ signal: "SIGKILL" });
    held.clear();
    client = await OrqClient.connect({ port: server.port, clientName: "groups-crash" });
    await checkDurableState(`after restart ${round + 1}`);
  }

  expect(deliveries).toBeGreaterThan(0);
  // The bounds were reached and held something back.
  expect(passedOverSeen).toBe(true);
  expect(groupPeak).toBe(groupMax);
  expect(topicPeak).toBe(topicMax);

  // Resume every paused group and drain: every item is delivered in the end.
  for (const name of [...pauses.keys()]) expect(await c().resume(ns, topic, { group: name })).toEqual({ resumed: true });
  pauses.clear();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got = await c().dequeue(ns, { topics: [{ topic, count: 10 }], leaseMs: 5_000, waitMs: 200 });
    if (got.length > 0) {
      for (const [group, n] of countByGroup(got)) expect(`drain: group ${String(group)} got ${n}`).toBe(`drain: group ${String(group)} got ${Math.min(n, groupMax)}`);
      expect(got.length).toBeLessThanOrEqual(topicMax);
      await c().ack(ns, got.map((d) => d.receipt));
    }
    const left = (await c().groups(ns, topic, { limit: 1000 })).groups;
    if (left.every((g) => g.ready + g.delayed + g.leased === 0)) break;
    if (Date.now() > deadline) throw new Error(`seed ${seed}: the topic did not drain: ${JSON.stringify(left)}`);
  }
}, 120_000);

function countByGroup(got: Delivery[]): Map<string | null, number> {
  const counts = new Map<string | null, number>();
  for (const d of got) counts.set(d.group ?? null, (counts.get(d.group ?? null) ?? 0) + 1);
  return counts;
}
