// Goal: a worker that may take only some signatures gets, from a topic with
// groups, exactly the item the contract's rule names: among the ready items
// it may take (groups not held back), the best priority, then the least v of
// the item's group, then delivery order. Seeded: random groups, priorities,
// requires and workers; every pick is checked against a brute-force scan of
// the engine's own ready items and group v's, then taken (so v's move on).

import { describe, expect, test } from "bun:test";
import type { LiveItem } from "../../../src/engine/state/item.ts";
import type { Engine } from "../../../src/engine/engine.ts";
import { Harness, item } from "../support/harness.ts";
import { seededRandom } from "../../support/seeded-random.ts";

const requiresForms: Array<Record<string, unknown> | null> = [null, { gpu: "a100" }, { gpu: "t4" }, { mem: { gte: 32 } }, { zone: { in: ["eu", "us"] } }, { gpu: "a100", mem: { gte: 64 } }];
const workers: Array<Record<string, unknown>> = [{ gpu: "a100", mem: 64 }, { gpu: "t4", mem: 16 }, { mem: 32, zone: "eu" }, { zone: "ap" }, { gpu: ["a100", "t4"], mem: 128, zone: "us" }];

interface Internals {
  states: { items: { values(): Iterable<LiveItem> } };
  dequeuer: { matcher: { workerKind(caps: unknown): number; isEligible(kind: number, sig: number): boolean } };
}

function internals(engine: Engine): Internals {
  return engine as unknown as Internals;
}

/** The contract's pick by brute force over the engine's ready items. */
function expected(engine: Engine, kind: number): LiveItem | null {
  const { states, dequeuer } = internals(engine);
  let best: LiveItem | null = null;
  let bestV = 0;
  for (const candidate of states.items.values()) {
    if (candidate.state !== "ready" || !candidate.inReadyHeap) continue;
    if (!dequeuer.matcher.isEligible(kind, candidate.signatureId)) continue;
    const rotation = candidate.topic.rotation!;
    const group = candidate.group ?? rotation.nil;
    if (group.held !== 0) continue;
    const v = group.v;
    const before =
      best === null ||
      candidate.priority < best.priority ||
      (candidate.priority === best.priority && (v < bestV || (v === bestV && (candidate.deliverAtMs < best.deliverAtMs || (candidate.deliverAtMs === best.deliverAtMs && candidate.key < best.key)))));
    if (before) {
      best = candidate;
      bestV = v;
    }
  }
  return best;
}

describe("the pick of a worker that may take only some signatures", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    test(`agrees with a brute-force scan, seed ${seed}`, async () => {
      const random = seededRandom(seed);
      const h = new Harness();
      // Odd seeds bound every group (held groups leave the pick) and weight one.
      if (seed % 2 === 1) {
        await h.settle(h.engine.policy("n", { topic: "t", group: "*", weight: null, maxLeased: 6, rate: null, clear: false }, h.now));
        await h.settle(h.engine.policy("n", { topic: "t", group: "g3", weight: 4, maxLeased: null, rate: null, clear: false }, h.now));
      }
      const batch = [];
      for (let i = 0; i < 400; i++) {
        const g = Math.floor(random() * 12);
        batch.push({ ...item("t", { priority: Math.floor(random() * 4), requires: requiresForms[Math.floor(random() * requiresForms.length)] ?? null }), group: g === 0 ? null : `g${g}` });
      }
      await h.enqueue("n", batch);
      for (let step = 0; step < 300; step++) {
        const caps = workers[Math.floor(random() * workers.length)]!;
        const before = expectedFor(h.engine, caps);
        const [got] = await h.dequeue("n", [["t", 1]], { capabilities: caps });
        expect(got?.id ?? null).toBe(before?.id ?? null);
        // Some deliveries end, so bounded groups come back.
        if (got !== undefined && random() < 0.3) await h.settleAck(h.engine.ack("n", [got.receipt], h.now));
        // Now and then a group is paused or resumed (a paused group leaves the pick).
        if (random() < 0.05) {
          const name = `g${1 + Math.floor(random() * 11)}`;
          if (random() < 0.5) await h.settle(h.engine.pause("n", "t", null, h.now, name));
          else await h.settle(h.engine.resume("n", "t", h.now, name));
        }
        if (step % 5 === 0 && random() < 0.5) {
          const extra = Math.floor(random() * 12);
          await h.enqueue("n", [{ ...item("t", { priority: Math.floor(random() * 4), requires: requiresForms[Math.floor(random() * requiresForms.length)] ?? null }), group: extra === 0 ? null : `g${extra}` }]);
        }
      }
      h.check();
    });
  }
});

/** expected() for a worker with these capabilities, its kind from the engine's own parser and matcher. */
function expectedFor(engine: Engine, caps: Record<string, unknown>): LiveItem | null {
  const parsed = (engine as unknown as { dequeuer: { capabilities: { parse(raw: unknown): { ok: boolean; value: unknown } } } }).dequeuer.capabilities.parse(caps);
  if (!parsed.ok) throw new Error("bad capabilities");
  const kind = internals(engine).dequeuer.matcher.workerKind(parsed.value);
  return expected(engine, kind);
}
