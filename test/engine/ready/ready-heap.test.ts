// Goal: the two-level ready heap (src/engine/ready/ready-heap.ts) gives exactly
// the delivery order a sorted reference gives (priority, then deliverAtMs,
// then key) under seeded random inserts, pops and removals by handle, with
// few priorities (long levels) and with many (short ones), checking its
// invariants after every step; and nextKeys names the items the next pops
// give, best first, from the best level.

import { describe, expect, test } from "bun:test";
import { IntrusiveHeapNode } from "../../../src/lib/pairing-heap.ts";
import { ReadyHeap, readyLess } from "../../../src/engine/ready/ready-heap.ts";
import { seededRandom } from "../../support/seeded-random.ts";

class Entry extends IntrusiveHeapNode<Entry> {
  constructor(
    readonly priority: number,
    readonly deliverAtMs: number,
    readonly key: number,
  ) {
    super();
  }
}

const byDelivery = (a: Entry, b: Entry): number => (readyLess(a, b) ? -1 : readyLess(b, a) ? 1 : 0);

function run(seed: number, priorities: number, steps: number): void {
  const random = seededRandom(seed);
  const heap = new ReadyHeap<Entry>();
  const live: Entry[] = [];
  let key = 0;
  for (let step = 0; step < steps; step++) {
    const roll = random();
    if (roll < 0.55 || live.length === 0) {
      // Keys rise as they do in the engine; deliverAtMs mostly does too, with some late arrivals (a nack's retry, a delay).
      const deliverAtMs = random() < 0.8 ? key : Math.floor(random() * key);
      const entry = new Entry(Math.floor(random() * priorities), deliverAtMs, key++);
      heap.insertNode(entry);
      live.push(entry);
    } else if (roll < 0.85) {
      live.sort(byDelivery);
      const best = live.shift() as Entry;
      expect(heap.peek()).toBe(best);
      heap.remove(best);
    } else {
      const at = Math.floor(random() * live.length);
      const [gone] = live.splice(at, 1);
      heap.remove(gone as Entry);
    }
    expect(heap.size).toBe(live.length);
    heap.checkInvariants();
  }
  // Drain: every pop in reference order.
  live.sort(byDelivery);
  for (const entry of live) {
    expect(heap.peek()).toBe(entry);
    heap.remove(entry);
  }
  expect(heap.size).toBe(0);
  expect(heap.peek()).toBeUndefined();
  heap.checkInvariants();
}

describe("ReadyHeap", () => {
  test("against a sorted reference, few priorities (long levels)", () => {
    for (const seed of [1, 2, 3]) run(seed, 3, 2000);
  });

  test("against a sorted reference, many priorities (mostly one item a level)", () => {
    for (const seed of [4, 5]) run(seed, 100_000, 2000);
  });

  test("nextKeys names the next pops of the best level, best first, up to its limit", () => {
    const random = seededRandom(9);
    const heap = new ReadyHeap<Entry>();
    const entries: Entry[] = [];
    for (let key = 0; key < 300; key++) {
      const entry = new Entry(Math.floor(random() * 4), key, key);
      heap.insertNode(entry);
      entries.push(entry);
    }
    // One pop first: a level's heap restructures on its first pop, as a drain's do.
    entries.sort(byDelivery);
    heap.remove(entries.shift() as Entry);
    const keys: number[] = [];
    heap.nextKeys(8, keys);
    const bestLevel = entries.filter((e) => e.priority === (entries[0] as Entry).priority);
    expect(keys.length).toBe(8);
    expect(keys[0]).toBe((entries[0] as Entry).key);
    // Best first: each key is one of the level's items, in delivery order.
    expect(keys).toEqual(bestLevel.slice(0, 8).map((e) => e.key));
    // Appends to what the array holds, and never past the limit or the level.
    const more = [-1];
    heap.nextKeys(1000, more);
    expect(more[0]).toBe(-1);
    expect(more.length - 1).toBeLessThanOrEqual(bestLevel.length);
    expect(more.length - 1).toBeGreaterThan(0);
  });

  test("levelRoots gives one root per priority in use", () => {
    const heap = new ReadyHeap<Entry>();
    for (let key = 0; key < 20; key++) heap.insertNode(new Entry(key % 5, key, key));
    const roots = heap.levelRoots().map((node) => node.value);
    expect(roots.map((e) => e.priority).sort()).toEqual([0, 1, 2, 3, 4]);
    // Each root is its level's first item.
    for (const root of roots) expect(root.key).toBe(root.priority);
  });
});
