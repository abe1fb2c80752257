// Goal: TopsByKind (per topic, one lazy heap of slot tops per eligibility
// class) answers every pick exactly as a brute-force scan would: the best
// current top among the slots the kind may take, on healthy shards. Checked
// through seeded random runs of groups joining and leaving, entries added and
// removed, tops improving, worsening and clearing, kinds evicted and kinds
// whose verdicts split a class, with the class bound small enough that kinds
// fall back to the shared TopsHeap and idle classes are replaced; invariants
// hold throughout. The bounds are probed at limit-1, limit and limit+1.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { type KindSource, TopsByKind } from "../../../src/engine/matching/index.ts";
import { eligibleClassesMaxDefault } from "../../../src/limits.ts";
import { noClass } from "../../../src/engine/matching/tops-by-kind.ts";
import { seededRandom } from "../../support/seeded-random.ts";

type Top = { priority: number; deliverAtMs: number; order: number };

function less(a: Top, b: Top): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.order < b.order;
}

/** Verdicts by table; a kind not in `known` is evicted (asking about it is a bug, as with the Matcher). */
class Table implements KindSource {
  readonly eligible = new Map<number, Set<number>>();
  readonly known = new Set<number>();
  isEligible(kind: number, signatureId: number): boolean {
    if (!this.known.has(kind)) throw new AssertionError(`kind ${kind} was evicted`);
    return this.eligible.get(kind)?.has(signatureId) === true;
  }
  knowsKind(kind: number): boolean {
    return this.known.has(kind);
  }
  fitOf(): number {
    return 0;
  }
  hasPreferences(): boolean {
    return false;
  }
  add(kind: number, signatures: Iterable<number>): void {
    this.eligible.set(kind, new Set(signatures));
    this.known.add(kind);
  }
}

/** A topic's view: groups by signature, each with its slots (one per shard) and their tops. */
class Model {
  readonly groups = new Map<number, Map<number, { shard: number; top: Top | null }>>();
  readonly tops: TopsByKind;
  order = 0;
  constructor(options: { classesMax?: number; classIdlePicksMin?: number }) {
    this.tops = new TopsByKind(options);
  }
  addGroup(signatureId: number): void {
    this.groups.set(signatureId, new Map());
    this.tops.groupAdded(signatureId);
  }
  removeGroup(signatureId: number): void {
    for (const [slot, entry] of this.groups.get(signatureId) ?? []) {
      if (entry.top !== null) this.tops.clearTop(slot);
      this.tops.removeEntry(slot);
    }
    this.groups.delete(signatureId);
    this.tops.groupRemoved(signatureId);
  }
  addEntry(signatureId: number, shard: number): number {
    const slot = this.tops.addEntry(signatureId, shard);
    this.groups.get(signatureId)?.set(slot, { shard, top: null });
    return slot;
  }
  setTop(signatureId: number, slot: number, top: Top): void {
    this.tops.setTop(slot, top.priority, top.deliverAtMs, top.order);
    (this.groups.get(signatureId)?.get(slot) as { top: Top | null }).top = top;
  }
  clearTop(signatureId: number, slot: number): void {
    this.tops.clearTop(slot);
    (this.groups.get(signatureId)?.get(slot) as { top: Top | null }).top = null;
  }
  /** The topic's pick: the kind's class, or the shared heap walk for a kind without one. */
  pick(source: KindSource, kind: number, shardOk: Uint8Array | null): number {
    const slot = this.tops.best(source, kind, shardOk, this.groups);
    return slot === noClass ? this.tops.sharedHeap().best(source, kind, shardOk) : slot;
  }
  expected(source: Table, kind: number, shardOk: Uint8Array | null): number {
    let best = -1;
    let bestTop: Top | null = null;
    for (const [signatureId, slots] of this.groups) {
      if (source.eligible.get(kind)?.has(signatureId) !== true) continue;
      for (const [slot, entry] of slots) {
        if (entry.top === null || (shardOk !== null && shardOk[entry.shard] !== 1)) continue;
        if (bestTop === null || less(entry.top, bestTop)) {
          best = slot;
          bestTop = entry.top;
        }
      }
    }
    return best;
  }
}

function randomRun(seed: number, options: { classesMax: number; classIdlePicksMin: number; kinds: number; steps: number; kindChurn: boolean }): { fallbacks: number; picks: number } {
  const random = seededRandom(seed);
  const source = new Table();
  const signatures = 24;
  let nextKind = 1;
  const live: number[] = [];
  const newKind = (): void => {
    const share = [0.05, 0.2, 0.5, 0.9, 1][Math.floor(random() * 5)] as number;
    const set: number[] = [];
    for (let sig = 0; sig < signatures; sig++) if (random() < share) set.push(sig);
    source.add(nextKind, set);
    live.push(nextKind++);
  };
  for (let k = 0; k < options.kinds; k++) newKind();
  const model = new Model(options);
  let fallbacks = 0;
  let picks = 0;
  for (let step = 0; step < options.steps; step++) {
    const roll = random();
    const sig = Math.floor(random() * signatures);
    const group = model.groups.get(sig);
    if (group === undefined) {
      if (roll < 0.3) model.addGroup(sig);
    } else if (roll < 0.04) {
      model.removeGroup(sig);
    } else if (roll < 0.12) {
      const shard = Math.floor(random() * 4);
      if (![...group.values()].some((e) => e.shard === shard)) model.addEntry(sig, shard);
    } else if (roll < 0.55 && group.size > 0) {
      const slots = [...group.keys()];
      const slot = slots[Math.floor(random() * slots.length)] as number;
      const current = group.get(slot)?.top ?? null;
      // Mostly worse (a lease took the best item), sometimes better (an enqueue), sometimes equal priority.
      const priority = current === null ? Math.floor(random() * 5) : current.priority + Math.floor(random() * 4) - 1;
      model.setTop(sig, slot, { priority, deliverAtMs: 1000 + Math.floor(random() * 3), order: model.order++ });
    } else if (roll < 0.65 && group.size > 0) {
      const slots = [...group.keys()];
      model.clearTop(sig, slots[Math.floor(random() * slots.length)] as number);
    } else if (options.kindChurn && roll < 0.67 && live.length > 1) {
      // The Matcher evicts a kind; a new one appears.
      const at = Math.floor(random() * live.length);
      source.known.delete(live[at] as number);
      live.splice(at, 1);
      newKind();
    } else if (options.kindChurn && roll < 0.69) {
      // A kind whose verdict on one signature differs from a classmate's (a new capability set).
      newKind();
    }
    const kind = live[Math.floor(random() * live.length)] as number;
    const shardOk = random() < 0.8 ? null : Uint8Array.from({ length: 4 }, () => (random() < 0.7 ? 1 : 0));
    const count = model.tops.eligibleCount(source, kind, model.groups);
    if (count === noClass) fallbacks++;
    else expect(count).toBe([...model.groups.keys()].filter((s) => source.eligible.get(kind)?.has(s)).length);
    expect(model.pick(source, kind, shardOk)).toBe(model.expected(source, kind, shardOk));
    picks++;
    if (step % 50 === 0) model.tops.checkInvariants(model.groups);
  }
  model.tops.checkInvariants(model.groups);
  return { fallbacks, picks };
}

describe("TopsByKind", () => {
  test("a seeded random run agrees with a brute-force scan (classes to spare)", () => {
    const { fallbacks, picks } = randomRun(7, { classesMax: 32, classIdlePicksMin: 4096, kinds: 6, steps: 6000, kindChurn: false });
    expect(picks).toBe(6000);
    expect(fallbacks).toBe(0);
  });

  test("a seeded random run agrees with a brute-force scan (classes scarce: fallback and replacement)", () => {
    const { fallbacks, picks } = randomRun(11, { classesMax: 2, classIdlePicksMin: 40, kinds: 8, steps: 6000, kindChurn: true });
    expect(picks).toBe(6000);
    expect(fallbacks).toBeGreaterThan(0);
    expect(fallbacks).toBeLessThan(picks);
  });

  test("the class bound at limit-1, limit and limit+1", () => {
    const limit = 3;
    const source = new Table();
    const model = new Model({ classesMax: limit, classIdlePicksMin: 100 });
    for (let sig = 0; sig < 4; sig++) {
      model.addGroup(sig);
      model.setTop(sig, model.addEntry(sig, 0), { priority: sig, deliverAtMs: 0, order: model.order++ });
    }
    // Kinds 1..4 may take different sets (sig k-1 and up), so each needs a class of its own.
    for (let kind = 1; kind <= 4; kind++) source.add(kind, [0, 1, 2, 3].filter((sig) => sig >= kind - 1));
    expect(model.tops.eligibleCount(source, 1, model.groups)).toBe(4);
    expect(model.tops.eligibleCount(source, 2, model.groups)).toBe(3);
    expect(model.tops.classCount).toBe(limit - 1);
    expect(model.tops.eligibleCount(source, 3, model.groups)).toBe(2);
    expect(model.tops.classCount).toBe(limit);
    // limit + 1: no class; the pick falls back to the shared heap and is still right.
    expect(model.tops.eligibleCount(source, 4, model.groups)).toBe(noClass);
    expect(model.tops.best(source, 4, null, model.groups)).toBe(noClass);
    expect(model.pick(source, 4, null)).toBe(model.expected(source, 4, null));
    expect(model.tops.sharedIsLive).toBe(true);
    // A kind sharing an existing class's verdicts joins it, full or not.
    source.add(5, [0, 1, 2, 3]);
    expect(model.tops.eligibleCount(source, 5, model.groups)).toBe(4);
    expect(model.tops.classCount).toBe(limit);
    // Once kinds 2 and 3 have been idle for classIdlePicksMin picks, kind 4 takes the idlest class.
    for (let i = 0; i < 100; i++) model.pick(source, 1, null);
    expect(model.tops.eligibleCount(source, 4, model.groups)).toBe(1);
    expect(model.tops.classCount).toBe(limit);
    expect(model.pick(source, 4, null)).toBe(model.expected(source, 4, null));
    model.tops.checkInvariants(model.groups);
  });

  test("classesMax accepts 1..32 (one bit each in a slot's mask)", () => {
    expect(eligibleClassesMaxDefault).toBe(32);
    expect(new TopsByKind({ classesMax: 32 }).classesMax).toBe(32);
    expect(new TopsByKind({ classesMax: 1 }).classesMax).toBe(1);
    expect(() => new TopsByKind({ classesMax: 33 })).toThrow(AssertionError);
    expect(() => new TopsByKind({ classesMax: 0 })).toThrow(AssertionError);
  });

  test("the 32nd class uses bit 31 (the sign bit of the mask) and updates reach it", () => {
    const source = new Table();
    const model = new Model({ classesMax: 32 });
    for (let sig = 0; sig < 32; sig++) model.addGroup(sig);
    const slots = Array.from({ length: 32 }, (_, sig) => model.addEntry(sig, 0));
    // Kind k may take signatures 0..k: 32 different sets, 32 classes; signature 31 only the last.
    for (let kind = 0; kind < 32; kind++) source.add(kind, Array.from({ length: kind + 1 }, (_, sig) => sig));
    for (let kind = 0; kind < 32; kind++) expect(model.tops.eligibleCount(source, kind, model.groups)).toBe(kind + 1);
    expect(model.tops.classCount).toBe(32);
    model.setTop(31, slots[31] as number, { priority: -5, deliverAtMs: 0, order: model.order++ });
    model.setTop(0, slots[0] as number, { priority: 0, deliverAtMs: 0, order: model.order++ });
    expect(model.pick(source, 31, null)).toBe(slots[31] as number);
    expect(model.pick(source, 30, null)).toBe(slots[0] as number);
    model.clearTop(31, slots[31] as number);
    expect(model.pick(source, 31, null)).toBe(slots[0] as number);
    model.tops.checkInvariants(model.groups);
  });

  test("a new group splits a class whose kinds disagree on it; an evicted kind's class goes", () => {
    const source = new Table();
    const model = new Model({});
    model.addGroup(1);
    const first = model.addEntry(1, 0);
    model.setTop(1, first, { priority: 5, deliverAtMs: 0, order: model.order++ });
    source.add(10, [1, 2]);
    source.add(11, [1]);
    expect(model.tops.eligibleCount(source, 10, model.groups)).toBe(1);
    expect(model.tops.eligibleCount(source, 11, model.groups)).toBe(1);
    expect(model.tops.classCount).toBe(1);
    model.addGroup(2);
    const second = model.addEntry(2, 1);
    model.setTop(2, second, { priority: 1, deliverAtMs: 0, order: model.order++ });
    expect(model.pick(source, 10, null)).toBe(second);
    expect(model.pick(source, 11, null)).toBe(first);
    expect(model.tops.classCount).toBe(2);
    model.tops.checkInvariants(model.groups);
    source.known.delete(10);
    model.addGroup(3);
    expect(model.tops.classCount).toBe(1);
    model.tops.checkInvariants(model.groups);
  });

  test("a worse top and a cleared slot are fixed at the next pick, not at the update", () => {
    const source = new Table();
    const model = new Model({});
    for (const sig of [1, 2]) model.addGroup(sig);
    const a = model.addEntry(1, 0);
    const b = model.addEntry(2, 0);
    source.add(1, [1, 2]);
    model.setTop(1, a, { priority: 1, deliverAtMs: 0, order: model.order++ });
    model.setTop(2, b, { priority: 2, deliverAtMs: 0, order: model.order++ });
    expect(model.pick(source, 1, null)).toBe(a);
    model.setTop(1, a, { priority: 3, deliverAtMs: 0, order: model.order++ });
    model.tops.checkInvariants(model.groups);
    expect(model.pick(source, 1, null)).toBe(b);
    model.clearTop(2, b);
    expect(model.pick(source, 1, null)).toBe(a);
    model.clearTop(1, a);
    expect(model.pick(source, 1, null)).toBe(-1);
    // Unhealthy shard: the scan path.
    model.setTop(1, a, { priority: 0, deliverAtMs: 0, order: model.order++ });
    expect(model.pick(source, 1, Uint8Array.of(0))).toBe(-1);
    expect(model.pick(source, 1, Uint8Array.of(1))).toBe(a);
    model.tops.checkInvariants(model.groups);
  });

  test("65 kinds sharing one class (past the 64 remembered mappings) still pick right", () => {
    const source = new Table();
    const model = new Model({});
    model.addGroup(1);
    const slot = model.addEntry(1, 0);
    model.setTop(1, slot, { priority: 0, deliverAtMs: 0, order: model.order++ });
    for (let kind = 1; kind <= 65; kind++) {
      source.add(kind, [1]);
      expect(model.pick(source, kind, null)).toBe(slot);
    }
    for (let kind = 1; kind <= 65; kind++) expect(model.pick(source, kind, null)).toBe(slot);
    expect(model.tops.classCount).toBe(1);
    model.tops.checkInvariants(model.groups);
  });
});
