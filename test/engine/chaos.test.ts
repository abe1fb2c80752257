// Goal: under random ops with storage faults (shards failing and healing) and
// restarts, the engine keeps its invariants and never loses what it promised:
// an id whose enqueue was durable is always known (live or ended), and an id
// whose ack was durable stays ended `acked`, across restarts. Replay a seed
// with ORQ_CHAOS_SEED=n.

import { expect, test } from "bun:test";
import { parseReceipt } from "../../src/engine/state/ids.ts";
import { Harness, item } from "./support/harness.ts";
import { seededRandom } from "../support/seeded-random.ts";

const seeds = process.env.ORQ_CHAOS_SEED !== undefined ? [Number(process.env.ORQ_CHAOS_SEED)] : [21, 22, 23];
const steps = 1500;

let commitFailures = 0;

async function settled(p: Promise<void> | null): Promise<boolean> {
  if (p === null) return true;
  try {
    await p;
    return true;
  } catch (error) {
    expect(String(error)).toContain("StorageUnavailableError");
    commitFailures++;
    return false;
  }
}

async function run(seed: number): Promise<void> {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const h = new Harness({ shards: 3 });
  const stored: string[] = [];
  const ackedDurably = new Set<string>();
  const receipts: string[] = [];
  let op = "";
  for (let step = 0; step < steps; step++) {
    try {
      const roll = r();
      if (roll < 0.25) {
        op = "enqueue";
        const res = h.engine.enqueue("n", [item(pick(["a", "b"]), { leaseMs: 100, maxAttempts: 3, delivery: r() < 0.3 ? "at_most_once" : "at_least_once" })], h.now);
        if (res.ok && (await settled(res.value.durable))) stored.push(...res.value.value.ids);
      } else if (roll < 0.5) {
        op = "dequeue";
        const res = h.engine.dequeue("n", { topics: [{ topic: pick(["a", "b"]), count: 2 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 }, h.now);
        if (res.ok && res.kind === "done" && (await settled(res.durable))) {
          for (const d of res.deliveries) receipts.push(d.receipt);
        }
      } else if (roll < 0.65 && receipts.length > 0) {
        op = "ack";
        const receipt = pick(receipts);
        const res = h.engine.ack("n", [receipt], h.now);
        if (res.ok && res.acked === 1 && (await settled(res.durable))) ackedDurably.add(parseReceipt(receipt)!.id);
      } else if (roll < 0.72 && receipts.length > 0) {
        op = "nack";
        const res = h.engine.nack("n", [{ receipt: pick(receipts), delayMs: null, metadata: null }], h.now);
        if (res.ok) await settled(res.value.durable);
      } else if (roll < 0.77 && stored.length > 0) {
        op = "cancel";
        const res = h.engine.cancel("n", [pick(stored)], h.now);
        if (res.ok) await settled(res.value.durable);
      } else if (roll < 0.82) {
        const shard = Math.floor(r() * 3);
        op = `toggle shard ${shard}`;
        if (r() < 0.3) h.store.failShard(shard);
        else h.store.healShard(shard);
      } else if (roll < 0.86) {
        op = "restart";
        await h.restart();
      } else {
        op = "jump";
        h.clock.advance(pick([1, 50, 150, 6000]));
        h.engine.tick(h.now);
      }
      h.check();
      for (const id of stored) {
        const state = h.state("n", id);
        expect(`${id} ${state === null ? "lost" : "known"}`).toBe(`${id} known`);
        if (ackedDurably.has(id)) expect(`${id} ${state}`).toBe(`${id} ended:acked`);
      }
    } catch (error) {
      throw new Error(`chaos: seed ${seed} step ${step} op ${op} (replay with ORQ_CHAOS_SEED=${seed}): ${String(error)}`);
    }
  }
  for (let s = 0; s < 3; s++) h.store.healShard(s);
  // The run must have exercised failures, or it proves nothing.
  expect(commitFailures).toBeGreaterThan(0);
  expect(stored.length).toBeGreaterThan(50);
  expect(ackedDurably.size).toBeGreaterThan(5);
}

for (const seed of seeds) {
  test(`no durable promise is broken under faults and restarts, seed ${seed}`, async () => {
    await run(seed);
  });
}
