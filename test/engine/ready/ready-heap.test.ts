// Goal: the two-level ready heap (src/engine/ready/ready-heap.ts) gives exactly
// the delivery order a sorted reference gives (priority, then deliverAtMs,
// then key) under seeded random inserts, pops and removals by handle, with
// few priorities (long levels) and with many (short ones), checking its
// invariants after every step; and nextKeys names the items the next pops
// give, best first, from the best level.

import { describe, expect, test } from "bun:test";
import { IntrusiveHeapNode } from "../../../src/lib/pairing-heap.ts";
import { ReadyHeap, readyLess } from "../../../src/engine/ready/ready-heap.ts";
import { readyFront, readyHeapLevels } from "../../../src/limits.ts";
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

/** Seeded steps: inserts lead for the first `growSteps` (the heap passes the switch to levels), removals after (it falls back). */
function run(seed: number, priorities: number, growSteps: number, steps: number): { leveled: boolean; flatAgain: boolean } {
  const random = seededRandom(seed);
  const heap = new ReadyHeap<Entry>();
  const live: Entry[] = [];
  let key = 0;
  let leveled = false;
  let flatAgain = false;
  for (let step = 0; step < steps; step++) {
    const roll = random();
    const insertShare = step < growSteps ? 0.8 : 0.25;
    if (roll < insertShare || live.length === 0) {
      // Keys rise as they do in the engine; deliverAtMs mostly does too, with some late arrivals (a nack's retry, a delay).
      const deliverAtMs = random() < 0.8 ? key : Math.floor(random() * key);
      const entry = new Entry(Math.floor(random() * priorities), deliverAtMs, key++);
      heap.insertNode(entry);
      live.push(entry);
    } else if (roll < insertShare + (1 - insertShare) * 0.7) {
      // The best item leaves, as a lease takes it: the reference's minimum by a scan.
      let best = 0;
      for (let i = 1; i < live.length; i++) if (readyLess(live[i] as Entry, live[best] as Entry)) best = i;
      const [top] = live.splice(best, 1);
      expect(heap.peek()).toBe(top as Entry);
      heap.remove(top as Entry);
    } else {
      const at = Math.floor(random() * live.length);
      const [gone] = live.splice(at, 1);
      heap.remove(gone as Entry);
    }
    expect(heap.size).toBe(live.length);
    if (heap.leveled) leveled = true;
    else if (leveled) flatAgain = true;
    if (step % 97 === 0) heap.checkInvariants();
  }
  heap.checkInvariants();
  // Drain: every pop in reference order.
  live.sort(byDelivery);
  for (const entry of live) {
    expect(heap.peek()).toBe(entry);
    heap.remove(entry);
  }
  expect(heap.size).toBe(0);
  expect(heap.peek()).toBeUndefined();
  heap.checkInvariants();
  return { leveled, flatAgain };
}

describe("ReadyHeap", () => {
  // Enough inserts to pass readyHeapLevels.fromItems, then enough removals to fall below flatBelowItems.
  const grow = Math.ceil(readyHeapLevels.fromItems / 0.6) + 500;
  const steps = grow + Math.ceil((readyHeapLevels.fromItems * 1.5) / 0.5);

  test("against a sorted reference, few priorities (long levels), across both switches", () => {
    for (const seed of [1, 2]) expect(run(seed, 3, grow, steps)).toEqual({ leveled: true, flatAgain: true });
  });

  test("against a sorted reference, many priorities (mostly one item a level), across both switches", () => {
    expect(run(4, 100_000, grow, steps)).toEqual({ leveled: true, flatAgain: true });
  });

  test("against a sorted reference while small: one heap throughout", () => {
    expect(run(5, 10, 300, 2000)).toEqual({ leveled: false, flatAgain: false });
  });

  test("nextKeys names the next pops, best first, up to its limit: over the whole heap while small, the best level once leveled", () => {
    for (const count of [300, readyHeapLevels.fromItems + 200]) {
      const random = seededRandom(9);
      const heap = new ReadyHeap<Entry>();
      const entries: Entry[] = [];
      for (let key = 0; key < count; key++) {
        const entry = new Entry(Math.floor(random() * 4), key, key);
        heap.insertNode(entry);
        entries.push(entry);
      }
      expect(heap.leveled).toBe(count > readyHeapLevels.fromItems);
      // One pop first: a heap restructures on its first pop, as a drain's do.
      entries.sort(byDelivery);
      heap.remove(entries.shift() as Entry);
      const keys: number[] = [];
      heap.nextKeys(8, keys);
      expect(keys).toEqual(entries.slice(0, 8).map((e) => e.key));
      // Appends to what the array holds, and never past the limit.
      const more = [-1];
      heap.nextKeys(20, more);
      expect(more[0]).toBe(-1);
      expect(more.slice(1)).toEqual(entries.slice(0, 20).map((e) => e.key));
      // Past the front's items, on into the heap.
      const past: number[] = [];
      heap.nextKeys(readyFront.items + 10, past);
      expect(past).toEqual(entries.slice(0, readyFront.items + 10).map((e) => e.key));
    }
  });

  test("walkRoots: the one heap's root while small; once leveled, one root per priority in use from the given one", () => {
    const small = new ReadyHeap<Entry>();
    for (let key = 0; key < 20; key++) small.insertNode(new Entry(key % 5, key, key));
    expect(small.walkRoots(3).map((node) => node.value.key)).toEqual([0]);
    const large = new ReadyHeap<Entry>();
    const count = readyHeapLevels.fromItems + 5;
    for (let key = 0; key < count; key++) large.insertNode(new Entry(key % 5, key, key));
    const roots = large.walkRoots(-Infinity).map((node) => node.value);
    expect(roots.map((e) => e.priority).sort()).toEqual([0, 1, 2, 3, 4]);
    // Each root is its level's first item.
    for (const root of roots) expect(root.key).toBe(root.priority);
    expect(large.walkRoots(3).map((node) => node.value.priority).sort()).toEqual([3, 4]);
  });

  test("with no front yet, removing items that are not the best starts none; taking the best starts it", () => {
    const heap = new ReadyHeap<Entry>();
    const live: Entry[] = [];
    // Inserted in delivery order, as a FIFO load fills a heap.
    for (let key = 0; key < 5_000; key++) {
      const entry = new Entry(key % 3, key, key);
      heap.insertNode(entry);
      live.push(entry);
    }
    live.sort(byDelivery);
    // A shard dropped newest first: each removal is of an item that is not the best, and none fills a front.
    for (let i = 0; i < 100; i++) {
      const gone = live.pop() as Entry;
      heap.remove(gone);
      expect(live.some((e) => e.held)).toBe(false);
    }
    heap.checkInvariants();
    // The best leaves (a lease): the front starts with the next readyFront.items items.
    heap.remove(live.shift() as Entry);
    expect(live.filter((e) => e.held)).toEqual(live.slice(0, readyFront.items));
    heap.checkInvariants();
    for (const entry of [...live]) {
      expect(heap.peek()).toBe(entry);
      heap.remove(entry);
    }
    expect(heap.size).toBe(0);
  });

  test("the front: filled by a removal, joined by better inserts, given back past twice its size, walked in order; invariants after every step", () => {
    const random = seededRandom(21);
    const heap = new ReadyHeap<Entry>();
    const live: Entry[] = [];
    let key = 0;
    const add = (priority: number): void => {
      const entry = new Entry(priority, key, key++);
      heap.insertNode(entry);
      live.push(entry);
    };
    for (let i = 0; i < 200; i++) add(Math.floor(random() * 1000));
    live.sort(byDelivery);
    // The first removal fills the front with the next readyFront.items items.
    heap.remove(live.shift() as Entry);
    heap.checkInvariants();
    const held = live.filter((e) => e.held);
    expect(held).toEqual(live.slice(0, readyFront.items));
    // Inserts that order before the front's last join it, in order; past twice its size its last goes back.
    for (let i = 0; i < 3 * readyFront.items; i++) {
      add(-1 - i);
      heap.checkInvariants();
    }
    live.sort(byDelivery);
    expect(live.filter((e) => e.held).length).toBe(2 * readyFront.items);
    expect(heap.peek()).toBe(live[0] as Entry);
    // A walk in order without popping sees every item once, front and heap alike.
    const walked: Entry[] = [];
    heap.walkInOrder((e) => {
      walked.push(e);
      return false;
    });
    expect(walked).toEqual(live);
    // Removals anywhere (a front item not at its head, a heap item), then a drain in order.
    for (const at of [3, 1, -1, 2 * readyFront.items + 5]) {
      const [gone] = live.splice(at < 0 ? live.length - 1 : at, 1);
      heap.remove(gone as Entry);
      expect(gone?.held).toBe(false);
      expect(gone?.inHeap).toBe(false);
      heap.checkInvariants();
    }
    for (const entry of [...live]) {
      expect(heap.peek()).toBe(entry);
      heap.remove(entry);
      live.shift();
      heap.checkInvariants();
    }
    expect(heap.size).toBe(0);
  });
});
