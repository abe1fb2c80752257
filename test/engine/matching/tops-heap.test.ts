// Goal: TopsHeap.best() (bounded or not) and bestAmong() return exactly the
// entry a brute-force scan would (the best top among entries the worker may
// take on healthy shards), through
// a seeded random run of entry additions, removals, top changes and clears;
// and its invariants hold throughout.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { TopsHeap } from "../../../src/engine/matching/index.ts";
import { walkTooLong } from "../../../src/engine/matching/tops-heap.ts";
import { seededRandom } from "../../support/seeded-random.ts";

type Top = { priority: number; deliverAtMs: number; order: number };

function less(a: Top, b: Top): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.order < b.order;
}

/** Eligibility by a fixed table: kind -> set of signature ids. */
function table(eligible: Map<number, Set<number>>) {
  return { isEligible: (kind: number, signatureId: number) => eligible.get(kind)?.has(signatureId) === true };
}

describe("TopsHeap", () => {
  test("empty and simple cases", () => {
    const tops = new TopsHeap();
    const eligibility = table(new Map([[1, new Set([7])]]));
    expect(tops.best(eligibility, 1, null)).toBe(-1);
    const a = tops.addEntry(7, 0);
    const b = tops.addEntry(8, 0);
    expect(tops.best(eligibility, 1, null)).toBe(-1);
    tops.setTop(b, 0, 0, 1);
    expect(tops.peek()).toBe(b);
    expect(tops.best(eligibility, 1, null)).toBe(-1);
    tops.setTop(a, 5, 0, 2);
    expect(tops.best(eligibility, 1, null)).toBe(a);
    expect(tops.best(eligibility, 1, new Uint8Array([0]))).toBe(-1);
    expect(() => tops.removeEntry(a)).toThrow(AssertionError);
    tops.clearTop(a);
    tops.removeEntry(a);
    expect(tops.best(eligibility, 1, null)).toBe(-1);
    expect(tops.entries).toBe(1);
    tops.checkInvariants();
  });

  test("seeded random run agrees with a brute-force scan", () => {
    const random = seededRandom(2024);
    const tops = new TopsHeap();
    const model = new Map<number, { signatureId: number; shard: number; top: Top | null }>();
    const kinds = new Map<number, Set<number>>();
    for (let kind = 0; kind < 6; kind++) {
      const set = new Set<number>();
      for (let sig = 0; sig < 40; sig++) if (random() < [0.02, 0.1, 0.3, 0.6, 0.9, 1][kind]!) set.add(sig);
      kinds.set(kind, set);
    }
    const eligibility = table(kinds);
    let order = 0;
    let checks = 0;
    for (let step = 0; step < 8000; step++) {
      const roll = random();
      const slots = [...model.keys()];
      const anySlot = slots[Math.floor(random() * slots.length)];
      if (roll < 0.1 || slots.length === 0) {
        const signatureId = Math.floor(random() * 40);
        const shard = Math.floor(random() * 4);
        const slot = tops.addEntry(signatureId, shard);
        expect(model.has(slot)).toBe(false);
        model.set(slot, { signatureId, shard, top: null });
      } else if (roll < 0.15 && anySlot !== undefined) {
        tops.clearTop(anySlot);
        tops.removeEntry(anySlot);
        model.delete(anySlot);
      } else if (roll < 0.7 && anySlot !== undefined) {
        // Small priority range and repeated deliverAtMs, so ties on the first keys are common.
        const top = { priority: Math.floor(random() * 5) - 2, deliverAtMs: 1000 + Math.floor(random() * 3), order: order++ };
        tops.setTop(anySlot, top.priority, top.deliverAtMs, top.order);
        (model.get(anySlot) as { top: Top | null }).top = top;
      } else if (anySlot !== undefined) {
        tops.clearTop(anySlot);
        (model.get(anySlot) as { top: Top | null }).top = null;
      }
      const shardOk = random() < 0.5 ? null : Uint8Array.from({ length: 4 }, () => (random() < 0.8 ? 1 : 0));
      const kind = Math.floor(random() * 6);
      let expected = -1;
      let expectedTop: Top | null = null;
      for (const [slot, entry] of model) {
        if (entry.top === null) continue;
        if (shardOk !== null && shardOk[entry.shard] !== 1) continue;
        if (!kinds.get(kind)?.has(entry.signatureId)) continue;
        if (expectedTop === null || less(entry.top, expectedTop)) {
          expected = slot;
          expectedTop = entry.top;
        }
      }
      expect(tops.best(eligibility, kind, shardOk)).toBe(expected);
      // A bounded walk finds the same entry or gives up; the slot scan always finds it.
      const walked = tops.best(eligibility, kind, shardOk, 3);
      if (walked !== walkTooLong) expect(walked).toBe(expected);
      const kindSlots = Int32Array.from([...model].filter(([, e]) => kinds.get(kind)?.has(e.signatureId)).map(([slot]) => slot));
      expect(tops.bestAmong(kindSlots, shardOk)).toBe(expected);
      checks++;
      if (step % 500 === 0) tops.checkInvariants();
      expect(tops.size).toBe([...model.values()].filter((e) => e.top !== null).length);
    }
    tops.checkInvariants();
    expect(checks).toBe(8000);
  });
});
