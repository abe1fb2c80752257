// Goal: the engine's fair sharing and limits agree with a reference model
// (reference-rotation.ts, written from the contract and docs/SCHEDULING.md,
// not from src/engine/groups) under long seeded random runs of enqueue (four
// groups and the nil group, three priorities, some delays, both delivery
// modes, some items requiring a gpu), dequeue (one or two topics, random
// counts and leases, workers with and without a gpu), ack, nack
// (with delays), cancel, lease expiry (clock jumps), policy changes (the
// topic's own, "*" and per group: weight, max_leased, rate; set and clear),
// group pauses (timed or not) and resumes, and restarts (the MemoryStore's
// durable copy reopened, as model.test.ts does). After every step:
// checkInvariants(), and each topic's `groups` (per group counts and pauses)
// and `policies` against the model. At every dequeue: the delivered ids, in
// order, are the model's; and an audit fed only by the engine's deliveries
// finds no group or topic at its max_leased, no paused group, and no
// delivery taken from a bucket holding less than one token.
//
// The model follows docs/SCHEDULING.md's choices, among them the resets of
// every v: at a restart (virtual times are memory only, so both sides start
// again at 0 and the order still compares exactly across restarts), when a
// topic starts rotating, and when it is dropped. Where the documents say
// nothing it copies what the engine does (reference-rotation.ts lists each).
// Two corners are kept out of the runs, being reported as engine bugs (a full
// bucket counts as absent or not depending on whether the bucket sweep has
// dropped it yet): within a run the groups' rates share one count and the
// topics' one count (only the period changes), and no policy changes within
// the longest period after a restart.
//
// Replay one seed: ORQ_FAIR_SEED=7 ORQ_FAIR_STEPS=3000 [ORQ_FAIR_TRACE=1] [ORQ_FAIR_RATES=0]
//   bun test test/engine/groups/fair-model.test.ts

import { expect, test } from "bun:test";
import type { Delivery, PolicyView } from "../../../src/engine/api.ts";
import { Harness, item, startMs } from "../support/harness.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { type GroupName, type Rate, RefBucket, type RefItem, RefModel, type RefOptions, type RefPolicy } from "./reference-rotation.ts";

const ns = "n";
const topicNames = ["t", "u"] as const;
const groupChoices: GroupName[] = ["a", "b", "c", "d", null];
/** A run's rates: one count for groups and one for topics (see run()), these periods. */
const periodChoices = [40, 100, 300, 700, 1000];
const periodMax = 1000;

/**
 * Rate bounds checked from the engine's deliveries alone, not the model's
 * order: per scope a bucket that starts full when a rate starts binding the
 * scope and after a restart (the most any reading of the contract allows), a
 * delivery needs a whole token.
 */
class RateAudit {
  private readonly buckets = new Map<string, RefBucket>();

  take(key: string, rate: Rate | null, nowMs: number, what: string): void {
    if (rate === null) {
      this.buckets.delete(key);
      return;
    }
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = RefBucket.full(rate, nowMs);
      this.buckets.set(key, bucket);
    } else if (bucket.count !== rate.count || bucket.perMs !== rate.perMs) {
      bucket.resize(rate, nowMs);
    }
    if (!bucket.canTake(nowMs)) throw new Error(`audit: ${what} delivered with ${bucket.tokens(nowMs).toFixed(3)} tokens in its bucket (rate ${rate.count}/${rate.perMs} ms)`);
    bucket.take(nowMs);
  }

  /** A policy changed the scope's rate: no rate, no bucket; another rate, the same tokens (capped). */
  rebind(key: string, rate: Rate | null, nowMs: number): void {
    if (rate === null) this.buckets.delete(key);
    else this.buckets.get(key)?.resize(rate, nowMs);
  }

  restart(): void {
    this.buckets.clear();
  }
}

function viewOf(group: string | null, policy: RefPolicy): PolicyView {
  const view: PolicyView = {};
  if (group !== null) view.group = group;
  if (policy.weight !== null) view.weight = policy.weight;
  if (policy.maxLeased !== null) view.maxLeased = policy.maxLeased;
  if (policy.rate !== null) view.rate = { ...policy.rate };
  return view;
}

const trace = process.env.ORQ_FAIR_TRACE === "1";
const referenceOptions: RefOptions = { lastLeastV: (process.env.ORQ_FAIR_L ?? "post") as RefOptions["lastLeastV"] };

async function run(seed: number, steps: number, withRates: boolean): Promise<void> {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const h = new Harness({ shards: 3 });
  const ref = new RefModel(h.now, referenceOptions);
  const audit = new RateAudit();
  /** Every receipt handed out (stale ones stay: acking them must do nothing). */
  const receipts: string[] = [];
  /** The receipt of each leased item's current delivery. */
  const current = new Map<string, string>();
  /** Per topic and scope: leases above max_leased allowed because the bound was lowered under them. */
  const slack = new Map<string, number>();
  let op = "";
  // One count per kind of scope in a run, the period varying: a full bucket whose
  // count grows keeps its tokens while the engine keeps it, and starts full again
  // once its sweep has dropped it (reported), so counts do not change within a run.
  const groupCount = pick([1, 2, 5]);
  const topicCount = pick([1, 3]);
  /** No policy changes within the longest per_ms after a restart: a full bucket the sweep drops then comes back empty at the restart instant, under the new rate (reported). */
  let restartedAtMs = Number.NEGATIVE_INFINITY;

  const leasedBy = (receipt: string): RefItem | undefined => {
    for (const [id, held] of current) if (held === receipt && ref.items.get(id)?.state === "leased") return ref.items.get(id);
    return undefined;
  };

  /** A debugging aid (ORQ_FAIR_TRACE=1): the model's state beside the engine's internals (read for the trace only, never compared): v per group (* in S, R rate-held; h<bits> held), buckets, topic holds. */
  const debugState = (): string => {
    const lines: string[] = [];
    for (const name of topicNames) {
      const t = ref.topic(name);
      const mine = [t.nil, ...t.objects.values()].map((g) => `${String(g.name)}:${g.v.toFixed(2)}${g.inS ? "*" : ""}${g.rate.held ? "R" : ""}`).join(" ");
      const rotation = (h.engine as any).states.namespaces.get(ns)?.topics.get(name)?.rotation;
      const theirs = rotation == null ? "-" : [rotation.nil, ...rotation.named.values()].map((g: any) => `${String(g.name)}:${g.v.toFixed(2)}${g.rotationAt >= 0 ? "*" : ""}${g.held ? `h${g.held}` : ""}`).join(" ");
      const pol = (h.engine as any).states.namespaces.policies.of(ns, name);
      const theirBuckets = pol === null ? "" : [...pol.buckets.entries()].map(([k, b]: [string, any]) => `${k.replace("\u0000", "~")}=${b.count}/${b.perMs}:${b.level(h.now).toFixed(3)}`).join(" ");
      const myBuckets = [...t.buckets.entries()].map(([k, b]) => `${k.replace("\u0000", "~")}=${b.count}/${b.perMs}:${b.tokens(h.now).toFixed(3)}`).join(" ");
      lines.push(`    buckets model ${myBuckets} | engine ${theirBuckets}`);
      const engineTopic = (h.engine as any).states.namespaces.get(ns)?.topics.get(name);
      const ready = [...t.items.values()].filter((it) => it.state === "ready").map((it) => `${it.id}@${String(it.group)}${it.gpu ? "g" : ""}p${it.priority}`).join(" ");
      lines.push(`    topic held model ${t.topicHeld()} (rate ${t.topicRate.held}, own ${JSON.stringify(t.own)}, leased ${t.leased}) engine ${engineTopic?.held}; ready ${ready}`);
      lines.push(`  ${name} model L=${t.lastLeastV.toFixed(2)} ${mine} | engine L=${rotation?.lastLeastV?.toFixed(2)} ${theirs}`);
    }
    return lines.join("\n");
  };

  const maxOf = (topic: string, scope: GroupName | undefined): number | null => {
    const t = ref.topic(topic);
    return scope === undefined ? (t.own?.maxLeased ?? null) : t.maxLeasedOf(scope);
  };

  const leasedOf = (topic: string, scope: GroupName | undefined): number => {
    const t = ref.topic(topic);
    return scope === undefined ? t.leased : t.leasedOf(scope);
  };

  const compare = () => {
    h.check();
    for (const name of topicNames) {
      const t = ref.topic(name);
      const expected = [];
      const names = new Set<GroupName>([...t.items.values()].map((it) => it.group));
      for (const name of t.pauses.keys()) names.add(name);
      const named = [...names].filter((n): n is string => n !== null).sort();
      for (const group of names.has(null) ? [null, ...named] : named) {
        const items = t.itemsOf(group);
        const count = (state: string) => items.filter((it) => it.state === state).length;
        const pause = group === null ? undefined : t.pauses.get(group);
        expected.push({
          group,
          ready: count("ready"),
          delayed: count("delayed"),
          waiting: 0,
          leased: count("leased"),
          dead: count("dead"),
          paused: pause !== undefined,
          ...(pause !== undefined && pause.untilMs !== null ? { pausedUntilMs: pause.untilMs } : {}),
        });
      }
      const groups = h.engine.groups(ns, name, { limit: 1000, after: null }).groups;
      expect(`${name} groups ${JSON.stringify(groups)}`).toBe(`${name} groups ${JSON.stringify(expected)}`);
      const views: PolicyView[] = [];
      if (t.own !== null) views.push(viewOf(null, t.own));
      const grouped: Array<[string, RefPolicy]> = [...t.named.entries()];
      if (t.star !== null) grouped.push(["*", t.star]);
      grouped.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      for (const [g, p] of grouped) views.push(viewOf(g, p));
      const policies = h.engine.policies(ns, name, { limit: 1000, after: null }).policies;
      expect(`${name} policies ${JSON.stringify(policies)}`).toBe(`${name} policies ${JSON.stringify(views)}`);
      // max_leased holds after every step (groups' leased counts are the engine's: compared above),
      // but for leases a bound lowered under them already had.
      for (const scope of [undefined, ...groupChoices]) {
        const max = maxOf(name, scope);
        if (max === null) continue;
        const key = `${name}/${String(scope)}`;
        const leased = leasedOf(name, scope);
        const allowed = Math.min(slack.get(key) ?? 0, Math.max(0, leased - max));
        slack.set(key, allowed);
        if (leased > max + allowed) throw new Error(`max_leased: ${key} holds ${leased} leases, max ${max}`);
      }
    }
  };

  /** The bounds, checked on the engine's deliveries in their order, before the model moves. */
  const auditDeliveries = (got: Delivery[]) => {
    const leased = new Map<string, number>();
    for (const d of got) {
      const t = ref.topic(d.topic);
      const group = d.group ?? null;
      const topicKey = `${d.topic}/topic`;
      const groupKey = `${d.topic}/${String(group)}`;
      const topicLeased = leased.get(topicKey) ?? t.leased;
      const groupLeased = leased.get(groupKey) ?? t.leasedOf(group);
      const topicMax = t.own?.maxLeased ?? null;
      const groupMax = t.maxLeasedOf(group);
      if (topicMax !== null && topicLeased >= topicMax) throw new Error(`audit: ${d.id} delivered with topic ${d.topic} at ${topicLeased} leases, max ${topicMax}`);
      if (groupMax !== null && groupLeased >= groupMax) throw new Error(`audit: ${d.id} delivered with group ${String(group)} of ${d.topic} at ${groupLeased} leases, max ${groupMax}`);
      if (group !== null && t.pauses.has(group)) throw new Error(`audit: ${d.id} delivered from paused group ${group} of ${d.topic}`);
      leased.set(topicKey, topicLeased + 1);
      leased.set(groupKey, groupLeased + 1);
      audit.take(topicKey, t.own?.rate ?? null, h.now, `${d.id} (topic ${d.topic})`);
      audit.take(groupKey, t.policyOf(group)?.rate ?? null, h.now, `${d.id} (group ${String(group)} of ${d.topic})`);
    }
  };

  for (let step = 0; step < steps; step++) {
    const roll = r();
    try {
      const live = [...ref.items.values()].filter((it) => it.state !== "ended");
      if (roll < 0.24 && live.length < 40) {
        const n = 1 + Math.floor(r() * 3);
        const inputs = Array.from({ length: n }, () => ({
          ...item(r() < 0.7 ? "t" : "u", {
            priority: pick([0, 0, 1, 2]),
            requires: r() < 0.25 ? { gpu: true } : null,
            delayMs: r() < 0.2 ? 1 + Math.floor(r() * 400) : null,
            leaseMs: 100 + Math.floor(r() * 900),
            delivery: r() < 0.15 ? "at_most_once" : "at_least_once",
            maxAttempts: 2 + Math.floor(r() * 5),
          }),
          group: pick(groupChoices),
        }));
        op = `enqueue ${inputs.map((x) => `${x.topic}/${String(x.group)}/p${x.priority}${x.delayMs === null ? "" : `+${x.delayMs}`}`).join(" ")}`;
        const ids = await h.enqueue(ns, inputs);
        ids.forEach((id, i) => {
          const input = inputs[i]!;
          ref.enqueue({
            id,
            seq: Number(id.split(":")[1]),
            topic: input.topic,
            group: input.group,
            priority: input.priority,
            gpu: input.requires !== null,
            delayMs: input.delayMs ?? 0,
            leaseMs: input.leaseMs as number,
            delivery: input.delivery,
            maxAttempts: input.maxAttempts,
          });
        });
      } else if (roll < 0.5) {
        const c1 = 1 + Math.floor(r() * 4);
        const c2 = 1 + Math.floor(r() * 4);
        const wants = pick([[{ topic: "t", count: c1 }], [{ topic: "u", count: c1 }], [{ topic: "t", count: c1 }, { topic: "u", count: c2 }], [{ topic: "u", count: c1 }, { topic: "t", count: c2 }]]);
        const leaseMs = r() < 0.5 ? 50 + Math.floor(r() * 750) : null;
        const gpu = r() < 0.5;
        op = `dequeue ${wants.map((w) => `${w.topic}x${w.count}`).join(" ")} lease ${leaseMs}${gpu ? " gpu" : ""}`;
        const got = await h.dequeue(ns, wants.map((w) => [w.topic, w.count] as [string, number]), { leaseMs, capabilities: gpu ? { gpu: true } : null });
        auditDeliveries(got);
        const expected = ref.dequeue(wants, leaseMs, gpu);
        const show = (xs: Array<{ id: string; group?: string | null }>) => xs.map((x) => `${x.id}@${String(x.group ?? null)}`).join(" ");
        expect(show(got)).toBe(show(expected));
        for (let i = 0; i < got.length; i++) {
          const d = got[i]!;
          expect(d.attempt).toBe(expected[i]!.attempt);
          expect(d.leaseExpiresAtMs).toBe(expected[i]!.leaseExpiresAtMs);
          current.set(d.id, d.receipt);
          receipts.push(d.receipt);
        }
      } else if (roll < 0.62 && receipts.length > 0) {
        const receipt = pick(receipts);
        op = `ack ${receipt}`;
        const res = await h.settleAck(h.engine.ack(ns, [receipt], h.now));
        const it = leasedBy(receipt);
        expect(res.acked).toBe(it ? 1 : 0);
        if (it) ref.ack(it);
      } else if (roll < 0.7 && receipts.length > 0) {
        const receipt = pick(receipts);
        const delayMs = r() < 0.5 ? Math.floor(r() * 300) : null;
        op = `nack ${receipt} ${delayMs}`;
        const res = await h.settle(h.engine.nack(ns, [{ receipt, delayMs, metadata: null }], h.now));
        const it = leasedBy(receipt);
        expect(res.nacked).toBe(it ? 1 : 0);
        if (it) ref.nack(it, delayMs ?? 0);
      } else if (roll < 0.72 && live.length > 0) {
        const it = pick(live);
        op = `cancel ${it.id}`;
        const res = await h.settle(h.engine.cancel(ns, [it.id], h.now));
        expect(res.cancelled).toBe(1);
        ref.cancel(it);
      } else if (roll < 0.82 && h.now - restartedAtMs >= periodMax) {
        const topic = pick(topicNames);
        const scope = pick<string | null>([null, "*", "*", "a", "b", "c", "d"]);
        const clear = r() < 0.25;
        const policy: RefPolicy = {
          weight: scope === null || r() < 0.5 ? null : pick([1, 2, 3, 5]),
          maxLeased: r() < 0.5 ? null : pick([1, 2, 3]),
          rate: withRates && r() < 0.5 ? { count: scope === null ? topicCount : groupCount, perMs: pick(periodChoices) } : null,
        };
        op = `policy ${topic} ${String(scope)} ${clear ? "clear" : JSON.stringify(policy)}`;
        const t = ref.topic(topic);
        const had = scope === null ? t.own : scope === "*" ? t.star : (t.named.get(scope) ?? null);
        const res = await h.settle(h.engine.policy(ns, { topic, group: scope, weight: policy.weight, maxLeased: policy.maxLeased, rate: policy.rate, clear }, h.now));
        expect(res).toEqual(clear ? { cleared: had !== null } : { policy: viewOf(scope, policy) });
        ref.setPolicy(topic, scope, clear ? null : policy);
        for (const s of [undefined, ...groupChoices]) {
          audit.rebind(`${topic}/${s === undefined ? "topic" : String(s)}`, s === undefined ? (t.own?.rate ?? null) : (t.policyOf(s)?.rate ?? null), h.now);
          const key = `${topic}/${String(s)}`;
          const max = maxOf(topic, s);
          slack.set(key, max === null ? 0 : Math.max(slack.get(key) ?? 0, leasedOf(topic, s) - max, 0));
        }
      } else if (roll < 0.88) {
        const topic = pick(topicNames);
        const group = pick(["a", "b", "c", "d"]);
        if (r() < 0.6) {
          const forMs = r() < 0.4 ? null : 1 + Math.floor(r() * 600);
          op = `pause ${topic}/${group} ${forMs}`;
          const res = await h.settle(h.engine.pause(ns, topic, forMs, h.now, group));
          expect(res.pausedUntilMs).toBe(forMs === null ? null : h.now + forMs);
          ref.pause(topic, group, forMs);
        } else {
          op = `resume ${topic}/${group}`;
          const res = await h.settle(h.engine.resume(ns, topic, h.now, group));
          expect(res.resumed).toBe(ref.resume(topic, group));
        }
      } else if (roll < 0.9) {
        op = "restart";
        await h.restart();
        ref.restart();
        restartedAtMs = h.now;
        audit.restart();
      } else {
        const jump = pick([0, 1, 5, 20, 50, 100, 250, 500, 1000]);
        op = `jump ${jump}`;
        h.clock.advance(jump);
      }
      // Both sides run what fell due by now (ops do it themselves; `groups` does not).
      h.engine.tick(h.now);
      ref.advance(h.now);
      if (trace) console.log(`step ${step} @${h.now - startMs}: ${op}\n${debugState()}`);
      compare();
    } catch (error) {
      throw new Error(`fair model mismatch: seed ${seed} step ${step} op ${op} (replay with ORQ_FAIR_SEED=${seed}${withRates ? "" : " ORQ_FAIR_RATES=0"}): ${String(error)}`);
    }
  }
}

const seedFromEnv = process.env.ORQ_FAIR_SEED;
const stepsFromEnv = process.env.ORQ_FAIR_STEPS;
const steps = stepsFromEnv !== undefined ? Number(stepsFromEnv) : 3000;
const ratesOn = process.env.ORQ_FAIR_RATES !== "0";

for (const seed of seedFromEnv !== undefined ? [Number(seedFromEnv)] : [1, 2, 3, 4, 5]) {
  test(`fair sharing and limits agree with the reference, seed ${seed}, ${steps} steps`, async () => {
    await run(seed, steps, ratesOn);
  });
}
