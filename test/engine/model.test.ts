// Goal: the engine agrees with a small reference model under long seeded
// random runs of enqueue, dequeue, ack, nack, extend, cancel, pause, resume,
// clock jumps and restarts (durableCopy of the MemoryStore + Engine.recover).
// After every step each live item's state and attempt, each ended item's
// outcome, each topic's counts and pause, and each topic's `list` (paged with
// a random limit) must match, and every index must pass checkInvariants().
//
// Replay one seed: ORQ_MODEL_SEED=1234 ORQ_MODEL_STEPS=5000 bun test test/engine/model.test.ts

import { expect, test } from "bun:test";
import type { DeliveryMode, ListCursor, ListPage } from "../../src/engine/api.ts";
import { Harness, item, unwrap } from "./support/harness.ts";
import { seededRandom } from "../support/seeded-random.ts";

type ModelState = "pending" | "waiting" | "leased" | "dead" | "ended";

interface ModelItem {
  id: string;
  seq: number;
  topic: string;
  priority: number;
  deliverAtMs: number;
  leaseMs: number;
  ttlAtMs: number | null;
  ttlPassed: boolean;
  delivery: DeliveryMode;
  maxAttempts: number;
  attempt: number;
  state: ModelState;
  leaseExpiresAtMs: number;
  receipt: string | null;
  outcome: string | null;
  key: string | null;
  gpu: boolean;
  /** Dependencies not yet acked, while waiting. */
  unmet: Set<string>;
}

class Model {
  readonly items = new Map<string, ModelItem>();
  /** Paused topics: when each pause ends (null: until resume). */
  readonly paused = new Map<string, number | null>();

  /** Apply every timed event up to nowMs; per item the order of its TTL and lease expiry does not change the result. */
  advance(nowMs: number): void {
    for (const [topic, untilMs] of this.paused) if (untilMs !== null && untilMs <= nowMs) this.paused.delete(topic);
    for (const it of this.items.values()) {
      for (;;) {
        if (it.state === "ended") break;
        const ttl = it.ttlAtMs !== null && !it.ttlPassed ? it.ttlAtMs : Number.POSITIVE_INFINITY;
        const lease = it.state === "leased" ? it.leaseExpiresAtMs : Number.POSITIVE_INFINITY;
        const next = Math.min(ttl, lease);
        if (next > nowMs) break;
        if (ttl <= lease) {
          if (it.state === "leased") it.ttlPassed = true;
          else if (it.state === "dead") {
            // Ending a dead letter does not touch dependents (they died with it).
            it.state = "ended";
            it.outcome = "expired";
          }
          else this.end(it, "expired");
        } else {
          it.receipt = null;
          if (it.ttlPassed || it.delivery === "at_most_once") this.end(it, "expired");
          else if (it.attempt >= it.maxAttempts) this.kill(it);
          else it.state = "pending";
        }
      }
    }
  }

  end(it: ModelItem, outcome: string): void {
    it.state = "ended";
    it.outcome = outcome;
    it.receipt = null;
    for (const w of this.items.values()) {
      if (w.state !== "waiting" || !w.unmet.has(it.id)) continue;
      if (outcome === "acked") {
        w.unmet.delete(it.id);
        if (w.unmet.size === 0) w.state = "pending";
      } else {
        this.kill(w);
      }
    }
  }

  kill(it: ModelItem): void {
    it.state = "dead";
    it.receipt = null;
    it.unmet.clear();
    for (const w of this.items.values()) if (w.state === "waiting" && w.unmet.has(it.id)) this.kill(w);
  }

  /** How an enqueue with `after` starts: waiting on live deps, dead if one failed, else pending. */
  classify(after: string[]): { state: ModelState; unmet: Set<string> } {
    const unmet = new Set<string>();
    let dead = false;
    for (const id of after) {
      const dep = this.items.get(id)!;
      if (dep.state === "ended") {
        if (dep.outcome !== "acked") dead = true;
      } else if (dep.state === "dead") dead = true;
      else unmet.add(id);
    }
    if (dead) return { state: "dead", unmet: new Set() };
    return { state: unmet.size > 0 ? "waiting" : "pending", unmet };
  }

  liveKey(topic: string, key: string): ModelItem | undefined {
    return [...this.items.values()].find((it) => it.topic === topic && it.key === key && it.state !== "ended");
  }

  take(topic: string, count: number, nowMs: number, gpu: boolean): ModelItem[] {
    if (this.paused.has(topic)) return [];
    const ready = [...this.items.values()].filter((it) => it.topic === topic && it.state === "pending" && it.deliverAtMs <= nowMs && (gpu || !it.gpu));
    ready.sort((a, b) => a.priority - b.priority || a.deliverAtMs - b.deliverAtMs || a.seq - b.seq);
    return ready.slice(0, count);
  }

  /** What `list` without a state shows: ready items in delivery order, then the others in enqueue order. */
  listed(topic: string, nowMs: number): string[] {
    const live = [...this.items.values()].filter((it) => it.topic === topic && it.state !== "ended");
    const ready = live.filter((it) => this.stateOf(it, nowMs) === "ready");
    ready.sort((a, b) => a.priority - b.priority || a.deliverAtMs - b.deliverAtMs || a.seq - b.seq);
    const others = live.filter((it) => this.stateOf(it, nowMs) !== "ready").sort((a, b) => a.seq - b.seq);
    return [...ready, ...others].map((it) => it.id);
  }

  stateOf(it: ModelItem, nowMs: number): string {
    if (it.state === "ended") return `ended:${it.outcome}`;
    if (it.state === "pending") return it.deliverAtMs > nowMs ? "delayed" : "ready";
    if (it.state === "waiting") return "waiting";
    return it.state;
  }
}

const seedFromEnv = process.env.ORQ_MODEL_SEED;
const stepsFromEnv = process.env.ORQ_MODEL_STEPS;
const seeds = seedFromEnv !== undefined ? [Number(seedFromEnv)] : [1, 2, 3, 4];
const steps = stepsFromEnv !== undefined ? Number(stepsFromEnv) : 3000;

async function run(seed: number): Promise<void> {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const h = new Harness({ shards: 3 });
  const model = new Model();
  const topics = ["a", "b", "c"];
  const receipts: string[] = [];
  const ids: string[] = [];
  let op = "";

  const compare = () => {
    h.check();
    const now = h.now;
    const live = [...model.items.values()].filter((it) => it.state !== "ended" || r() < 0.01);
    const got = unwrap(h.engine.get("n", live.map((it) => it.id), now)).items;
    for (let i = 0; i < live.length; i++) {
      const it = live[i] as ModelItem;
      const g = got[i];
      const engineState = g === null || g === undefined ? "null" : g.state === "ended" ? `ended:${g.outcome}` : g.state;
      expect(`${it.id} ${engineState}`).toBe(`${it.id} ${model.stateOf(it, now)}`);
      if (g && g.state !== "ended") expect(`${it.id} attempt ${g.attempt}`).toBe(`${it.id} attempt ${it.attempt}`);
    }
    for (const t of topics) {
      const counts = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
      for (const it of model.items.values()) {
        if (it.topic !== t || it.state === "ended") continue;
        counts[model.stateOf(it, now) as "ready"]++;
      }
      const listed = h.engine.topics("n", { prefix: t, limit: 1, after: null }).topics[0];
      const total = counts.ready + counts.delayed + counts.waiting + counts.leased + counts.dead;
      const paused = model.paused.has(t);
      const untilMs = model.paused.get(t) ?? null;
      const expected = { ...counts, paused, ...(untilMs === null ? {} : { pausedUntilMs: untilMs }), topic: undefined };
      expect(listed === undefined ? null : { ...listed, topic: undefined }).toEqual(total === 0 && !paused ? null : expected);
      // list, paged with a random limit, against the model's order.
      const limit = 1 + Math.floor(r() * 5);
      const ids: string[] = [];
      let after: ListCursor | null = null;
      for (let page = 0; page < 100; page++) {
        const got: ListPage = h.engine.list("n", t, { state: null, limit, after }, now);
        expect(got.items.length).toBeLessThanOrEqual(limit);
        ids.push(...got.items.map((s) => s.id));
        if (got.next === null) break;
        after = got.next;
      }
      expect(`${t}: ${ids.join(" ")}`).toBe(`${t}: ${model.listed(t, now).join(" ")}`);
    }
  };

  for (let step = 0; step < steps; step++) {
    const roll = r();
    try {
      // Keep the live set small so every step can compare all of it.
      const liveCount = [...model.items.values()].filter((x) => x.state !== "ended").length;
      if (roll < 0.25 && liveCount < 40) {
        const n = 1 + Math.floor(r() * 3);
        const inputs = Array.from({ length: n }, () => {
          const delayMs = r() < 0.3 ? Math.floor(r() * 500) : null;
          const ttlMs = r() < 0.3 ? 100 + Math.floor(r() * 2000) : null;
          const after = r() < 0.15 && ids.length > 0 ? [pick(ids), pick(ids)] : null;
          return item(pick(topics), {
            key: r() < 0.2 ? pick(["k1", "k2", "k3"]) : null,
            requires: r() < 0.3 ? { gpu: true } : null,
            after,
            priority: Math.floor(r() * 3),
            delayMs,
            ttlMs,
            leaseMs: 50 + Math.floor(r() * 800),
            delivery: r() < 0.3 ? "at_most_once" : "at_least_once",
            maxAttempts: 1 + Math.floor(r() * 3),
          });
        });
        op = `enqueue ${n}`;
        const got = await h.enqueue("n", inputs);
        const now = h.now;
        got.forEach((id, i) => {
          const input = inputs[i]!;
          const byKey = input.key === null ? undefined : model.liveKey(input.topic, input.key);
          if (byKey !== undefined) {
            expect(id).toBe(byKey.id);
            return;
          }
          ids.push(id);
          const start = model.classify(input.after ?? []);
          model.items.set(id, {
            key: input.key,
            gpu: input.requires !== null,
            unmet: start.unmet,
            id,
            seq: Number(id.split(":")[1]),
            topic: input.topic,
            priority: input.priority,
            deliverAtMs: now + (input.delayMs ?? 0),
            leaseMs: input.leaseMs as number,
            ttlAtMs: input.ttlMs === null ? null : now + input.ttlMs,
            ttlPassed: false,
            delivery: input.delivery,
            maxAttempts: input.maxAttempts,
            attempt: 0,
            state: start.state,
            leaseExpiresAtMs: 0,
            receipt: null,
            outcome: null,
          });
        });
      } else if (roll < 0.5) {
        const t = pick(topics);
        const count = 1 + Math.floor(r() * 3);
        const leaseMs = r() < 0.5 ? 50 + Math.floor(r() * 500) : null;
        const gpu = r() < 0.5;
        op = `dequeue ${t} ${count} lease ${leaseMs} gpu ${gpu}`;
        const expected = model.take(t, count, h.now, gpu);
        const got = await h.dequeue("n", [[t, count]], { leaseMs, capabilities: gpu ? { gpu: true } : null });
        expect(got.map((d) => d.id)).toEqual(expected.map((it) => it.id));
        for (let i = 0; i < got.length; i++) {
          const d = got[i]!;
          const it = expected[i]!;
          it.attempt++;
          it.state = "leased";
          it.leaseExpiresAtMs = h.now + (leaseMs ?? it.leaseMs);
          it.receipt = d.receipt;
          expect(d.attempt).toBe(it.attempt);
          expect(d.leaseExpiresAtMs).toBe(it.leaseExpiresAtMs);
          receipts.push(d.receipt);
        }
      } else if (roll < 0.62 && receipts.length > 0) {
        const receipt = pick(receipts);
        op = `ack ${receipt}`;
        const res = await h.settleAck(h.engine.ack("n", [receipt], h.now));
        const it = [...model.items.values()].find((x) => x.receipt === receipt && x.state === "leased");
        expect(res.acked).toBe(it ? 1 : 0);
        if (it) model.end(it, "acked");
      } else if (roll < 0.72 && receipts.length > 0) {
        const receipt = pick(receipts);
        const delayMs = r() < 0.5 ? Math.floor(r() * 300) : null;
        op = `nack ${receipt} ${delayMs}`;
        const res = await h.settle(h.engine.nack("n", [{ receipt, delayMs, metadata: null }], h.now));
        const it = [...model.items.values()].find((x) => x.receipt === receipt && x.state === "leased");
        expect(res.nacked).toBe(it ? 1 : 0);
        if (it) {
          it.receipt = null;
          if (it.ttlPassed) model.end(it, "expired");
          else if (it.attempt >= it.maxAttempts) model.kill(it);
          else {
            it.state = "pending";
            it.deliverAtMs = h.now + (delayMs ?? 0);
          }
        }
      } else if (roll < 0.78 && receipts.length > 0) {
        const receipt = pick(receipts);
        const leaseMs = 1 + Math.floor(r() * 600);
        op = `extend ${receipt} ${leaseMs}`;
        const res = await h.settle(h.engine.extend("n", [{ receipt, leaseMs }], h.now));
        const it = [...model.items.values()].find((x) => x.receipt === receipt && x.state === "leased");
        expect(res.extended).toBe(it ? 1 : 0);
        if (it) it.leaseExpiresAtMs = h.now + leaseMs;
      } else if (roll < 0.83 && ids.length > 0) {
        const id = pick(ids);
        op = `cancel ${id}`;
        const res = await h.settle(h.engine.cancel("n", [id], h.now));
        const it = model.items.get(id)!;
        expect(res.cancelled).toBe(it.state === "ended" ? 0 : 1);
        if (it.state === "dead") {
          it.state = "ended";
          it.outcome = "cancelled";
        } else if (it.state !== "ended") model.end(it, "cancelled");
      } else if (roll < 0.86) {
        op = "redrive";
        const t = pick(topics);
        const res = await h.settle(h.engine.redrive("n", t, null, h.now));
        const dead = [...model.items.values()].filter((x) => x.topic === t && x.state === "dead");
        expect(res.redriven).toBe(dead.length);
        for (const it of dead) {
          it.state = "pending";
          it.attempt = 0;
          it.unmet.clear();
        }
      } else if (roll < 0.88) {
        op = "restart";
        await h.restart();
      } else if (roll < 0.91) {
        const t = pick(topics);
        if (r() < 0.6) {
          const forMs = r() < 0.5 ? null : 1 + Math.floor(r() * 500);
          op = `pause ${t} ${forMs}`;
          const res = await h.settle(h.engine.pause("n", t, forMs, h.now));
          expect(res.pausedUntilMs).toBe(forMs === null ? null : h.now + forMs);
          model.paused.set(t, res.pausedUntilMs);
        } else {
          op = `resume ${t}`;
          const res = await h.settle(h.engine.resume("n", t, h.now));
          expect(res.resumed).toBe(model.paused.has(t));
          model.paused.delete(t);
        }
      } else {
        const jump = pick([0, 1, 10, 50, 100, 300, 700]);
        op = `jump ${jump}`;
        h.clock.advance(jump);
        if (r() < 0.5) h.engine.tick(h.now);
      }
      model.advance(h.now);
      // Ops see due deadlines themselves; a get is an op, so compare() sees the same instant.
      compare();
    } catch (error) {
      throw new Error(`model mismatch: seed ${seed} step ${step} op ${op} (replay with ORQ_MODEL_SEED=${seed}): ${String(error)}`);
    }
  }
}

for (const seed of seeds) {
  test(`engine agrees with the model, seed ${seed}, ${steps} steps`, async () => {
    await run(seed);
  });
}
