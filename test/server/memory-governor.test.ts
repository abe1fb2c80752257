// Goal: the heap governor collects once the heap has grown by growthFactor
// since the last collection (probed just below and at the trigger), not by
// growth below heapBytesMin, takes the size after a collection (or a smaller
// one JavaScriptCore's own collection left) as the new base, stands aside
// (collects only at standAsideCeilingFactor) once the live bytes its
// collections found have stayed within liveChangeMin for steadyForMs (also
// when a collection that keeps its pages leaves the capacity high), and paces
// again once a collection finds it grown or shrunk by that much, or once the
// live item count has moved by that much since it stood aside, checks only
// while requests arrive (a quiet interval disarms it), and never after
// stop(). Below heapBytesMin it still collects once every
// smallHeapCollectEveryMs (the cadence), counted from its last collection.
// A pacing collection keeps the pages it frees while the live item count has
// not grown since the last collection (a drain), and every other one (a
// load's, the ceiling's, the cadence's) returns them. While holdOff says so it paces
// nothing, and the capacity when it ends is the new base.
// The timer is a fake fired by hand, the clock and the heap size numbers the
// test sets.

import { describe, expect, test } from "bun:test";
import { heapGovernor } from "../../src/limits.ts";
import type { IdleTimers } from "../../src/server/idle-gc.ts";
import { HeapGovernor } from "../../src/server/memory-governor.ts";

class FakeTimers implements IdleTimers {
  pending: Array<{ callback: () => void; delayMs: number; id: number }> = [];
  private nextId = 1;
  set(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.pending.push({ callback, delayMs, id });
    return id;
  }
  clear(handle: unknown): void {
    this.pending = this.pending.filter((entry) => entry.id !== handle);
  }
  fire(): void {
    expect(this.pending.length).toBe(1);
    this.pending.shift()?.callback();
  }
}

const MiB = 1024 * 1024;

/** An injected clock: the governor reads it when a collection ends. */
const clock = { ms: 0 };
const nowMs = () => clock.ms;

function setUp(startBytes: number, afterCollectBytes: number, holdOff?: () => boolean) {
  const timers = new FakeTimers();
  const heap = { bytes: startBytes };
  const collected: number[] = [];
  const freed: string[] = [];
  const governor = new HeapGovernor({
    timers,
    heapBytes: () => heap.bytes,
    nowMs,
    collect: (bytes, _reason, pages) => {
      collected.push(bytes);
      freed.push(pages);
      heap.bytes = afterCollectBytes;
      return afterCollectBytes;
    },
    growthFactor: 1.5,
    checkMs: 100,
    heapBytesMin: 64 * MiB,
    holdOff,
  });
  /** A request, then the check interval ends. */
  const step = (bytes: number) => {
    governor.noteRequest();
    heap.bytes = bytes;
    timers.fire();
  };
  return { timers, heap, collected, freed, governor, step };
}

describe("HeapGovernor", () => {
  test("collects when the heap reaches growthFactor x its size after the last collection", () => {
    const { collected, step, governor } = setUp(100 * MiB, 110 * MiB);
    expect(governor.triggerBytes).toBe(150 * MiB);
    step(150 * MiB - 1);
    expect(collected).toEqual([]);
    step(150 * MiB);
    expect(collected).toEqual([150 * MiB]);
    // The new base is the size right after the collection.
    expect(governor.triggerBytes).toBe(165 * MiB);
    step(165 * MiB - 1);
    expect(collected.length).toBe(1);
    step(165 * MiB);
    expect(collected.length).toBe(2);
  });

  test("while holdOff says so (a cluster node filing in a shard) it paces no collection; the capacity when it ends is the new base", () => {
    const moving = { now: true };
    const { collected, step, governor } = setUp(100 * MiB, 110 * MiB, () => moving.now);
    step(150 * MiB);
    step(400 * MiB);
    expect(collected).toEqual([]);
    moving.now = false;
    // The growth while held off was live items: the base moves up to it, no collection.
    step(400 * MiB);
    expect(collected).toEqual([]);
    expect(governor.triggerBytes).toBe(600 * MiB);
    step(600 * MiB - 1);
    expect(collected).toEqual([]);
    step(600 * MiB);
    expect(collected).toEqual([600 * MiB]);
  });

  /**
   * `keepLeavesCapacity`: a collection that keeps the freed pages leaves the
   * capacity where it was (as bun:jsc fullGC() does, its sweep left to later)
   * while it still reports `afterCollect` live; otherwise every collection
   * leaves the capacity at `afterCollect`.
   */
  function asideSetUp(startBytes: number, keepLeavesCapacity = false) {
    clock.ms = 0;
    const timers = new FakeTimers();
    const heap = { bytes: startBytes, afterCollect: startBytes, items: 1_000_000 };
    const collected: Array<[number, boolean]> = [];
    /** Each collection's `reason:freed`. */
    const freed: string[] = [];
    const governor = new HeapGovernor({
      timers,
      nowMs,
      liveItems: () => heap.items,
      heapBytes: () => heap.bytes,
      collect: (bytes, reason, pages) => {
        // Standing aside, only the ceiling collects.
        collected.push([bytes / MiB, reason === "ceiling"]);
        freed.push(`${reason}:${pages}`);
        if (!(keepLeavesCapacity && pages === "keep")) heap.bytes = heap.afterCollect;
        return heap.afterCollect;
      },
      growthFactor: 1.25,
      standAsideCeilingFactor: 3,
      liveChangeMin: 0.02,
      steadyForMs: 5_000,
      checkMs: 100,
      heapBytesMin: 64 * MiB,
    });
    /** At `atMs`, a request, and the heap at `bytes` when the interval ends; a collection leaves `afterMiB`. */
    const step = (atMs: number, bytes: number, afterMiB = heap.afterCollect / MiB) => {
      clock.ms = atMs;
      heap.afterCollect = afterMiB * MiB;
      governor.noteRequest();
      heap.bytes = bytes;
      timers.fire();
    };
    /** Two checks 5 s apart whose collections leave 100 MiB: the governor stands aside. */
    const standAside = () => {
      step(0, 1000 * MiB, 100);
      step(5_000, 1000 * MiB, 100);
      expect(governor.standingAside).toBe(true);
    };
    return { governor, collected, freed, step, heap, standAside };
  }

  test("stands aside once the live bytes its collections found have held within liveChangeMin for steadyForMs, and paces again when they move", () => {
    const { governor, collected, step } = asideSetUp(100 * MiB);
    // A steady stretch begins at the first collection (t=0) and readings stay within 2% of its 100 MiB.
    step(0, 125 * MiB, 100);
    step(1_000, 200 * MiB, 101.5);
    step(4_999, 200 * MiB, 98.5);
    expect(governor.standingAside).toBe(false);
    expect(governor.triggerBytes).toBe(98.5 * 1.25 * MiB);
    step(5_000, 200 * MiB, 100);
    expect(governor.standingAside).toBe(true);
    // Standing aside it collects only at 3x the base.
    expect(governor.triggerBytes).toBe(300 * MiB);
    step(6_000, 300 * MiB - 1);
    expect(collected.length).toBe(4);
    // The ceiling's collection finds the live heap 2% larger: pacing again, and a new stretch from here.
    step(7_000, 300 * MiB, 102);
    expect(governor.standingAside).toBe(false);
    expect(governor.triggerBytes).toBe(102 * 1.25 * MiB);
    step(11_999, 1000 * MiB, 102);
    expect(governor.standingAside).toBe(false);
    step(12_000, 1000 * MiB, 102);
    expect(governor.standingAside).toBe(true);
    expect(collected).toEqual([
      [125, false],
      [200, false],
      [200, false],
      [200, false],
      [300, true],
      [1000, false],
      [1000, false],
    ]);
  });

  test("collections that keep the freed pages leave the capacity high, and the governor still stands aside on the live bytes they found", () => {
    // A steady load on a backlog: the item count holds, so every pacing collection keeps its pages (bun:jsc fullGC()),
    // and the capacity read right after each is the reading that triggered it (130-170 MiB here, more than 2% apart);
    // the sweeper lowers it by the next check. The live heap each found is 100 MiB throughout.
    const { governor, collected, freed, step } = asideSetUp(100 * MiB, true);
    const triggers = [130, 160, 140, 170, 150, 165];
    for (const [second, trigger] of triggers.entries()) {
      step(second * 1_000, trigger * MiB, 100);
      expect(collected.length).toBe(second + 1);
      // The sweeper's work shows at the next check: the base falls back to the live heap's capacity.
      step(second * 1_000 + 500, 100 * MiB);
    }
    expect(freed.every((entry) => entry === "growth:keep")).toBe(true);
    // From the first collection (t=0) to the sixth (t=5 s) the live bytes held within 2%: standing aside.
    expect(governor.standingAside).toBe(true);
    expect(governor.triggerBytes).toBe(300 * MiB);
  });

  test("standing aside, a live item count moved by liveChangeMin (a drain or a load beginning) brings it back to pacing at once", () => {
    const { governor, collected, step, heap, standAside } = asideSetUp(100 * MiB);
    standAside();
    // 19,999 items fewer (under 2% of 1,000,000): still aside, no collection at 200 MiB.
    heap.items = 980_001;
    step(6_000, 200 * MiB);
    expect(governor.standingAside).toBe(true);
    expect(collected.length).toBe(2);
    // 20,000 fewer: pacing again, and the same check collects at 1.25x.
    heap.items = 980_000;
    step(7_000, 200 * MiB, 90);
    expect(governor.standingAside).toBe(false);
    expect(collected).toEqual([
      [1000, false],
      [1000, false],
      [200, false],
    ]);
    // A new stretch begins at that collection: 5 s more of steady readings before standing aside again.
    step(11_999, 1000 * MiB, 90);
    expect(governor.standingAside).toBe(false);
    step(12_000, 1000 * MiB, 90);
    expect(governor.standingAside).toBe(true);
    // A load beginning: 2% more items than when it stood aside this time.
    heap.items = 980_000 + 19_600;
    step(13_000, 1000 * MiB, 120);
    expect(governor.standingAside).toBe(false);
  });

  test("standing aside with no live items, the first item brings it back to pacing", () => {
    const { governor, step, heap, standAside } = asideSetUp(100 * MiB);
    heap.items = 0;
    standAside();
    step(6_000, 200 * MiB);
    expect(governor.standingAside).toBe(true);
    heap.items = 1;
    step(7_000, 200 * MiB);
    expect(governor.standingAside).toBe(false);
  });

  test("a load whose capacity after each collection moves a tenth either way but grows over seconds never stands aside", () => {
    const { governor, step } = asideSetUp(100 * MiB);
    // Capacities left after each collection (MiB) at 0.5 s intervals, from a 1,000,000-item load's log: 93, 95, 94 are
    // three readings within 2% in a row.
    const load = [67, 80, 72, 93, 95, 94, 105, 106, 119, 126, 123, 140, 138, 160, 158];
    load.forEach((afterMiB, i) => {
      step(i * 500, 1000 * MiB, afterMiB);
      expect(governor.standingAside).toBe(false);
    });
    expect(governor.collections).toBe(load.length);
  });

  test("a drain (the live heap shrinking 1-4% a collection) never stands aside", () => {
    const { governor, step } = asideSetUp(200 * MiB);
    const drain = [139, 125, 125, 123, 120, 117, 113, 111, 107, 105, 103, 101, 98, 94, 92, 88, 84, 79, 69, 61, 44, 23];
    drain.forEach((afterMiB, i) => {
      step(i * 400, 1000 * MiB, afterMiB);
      expect(governor.standingAside).toBe(false);
    });
  });

  test("a smaller reading (the runtime's own collection) lowers the base", () => {
    const { collected, step, governor } = setUp(200 * MiB, 100 * MiB);
    step(120 * MiB);
    expect(governor.triggerBytes).toBe(180 * MiB);
    step(180 * MiB);
    expect(collected).toEqual([180 * MiB]);
  });

  test("never collects below heapBytesMin", () => {
    const { collected, step, governor } = setUp(10 * MiB, 10 * MiB);
    expect(governor.triggerBytes).toBe(64 * MiB);
    step(64 * MiB - 1);
    expect(collected).toEqual([]);
    step(64 * MiB);
    expect(collected).toEqual([64 * MiB]);
  });

  /** A governor with a 64 MiB floor and a 30 s cadence whose collections leave `afterBytes`; `stepAt` is a request and a check at that time. */
  function cadenceSetUp(startBytes: number, afterBytes: number) {
    const timers = new FakeTimers();
    const heap = { bytes: startBytes };
    const reasons: string[] = [];
    const freed: string[] = [];
    clock.ms = 1_000;
    const governor = new HeapGovernor({
      timers,
      heapBytes: () => heap.bytes,
      nowMs,
      // The same live item count throughout: only the reason decides.
      liveItems: () => 500,
      collect: (_bytes, reason, pages) => {
        reasons.push(reason);
        freed.push(pages);
        heap.bytes = afterBytes;
        return afterBytes;
      },
      growthFactor: 1.5,
      checkMs: 100,
      heapBytesMin: 64 * MiB,
      smallHeapCollectEveryMs: 30_000,
    });
    const stepAt = (atMs: number, bytes: number) => {
      clock.ms = atMs;
      heap.bytes = bytes;
      governor.noteRequest();
      timers.fire();
    };
    return { governor, reasons, freed, stepAt };
  }

  test("below heapBytesMin, a full collection once every smallHeapCollectEveryMs while requests arrive (reason cadence), counted from the last collection of any kind", () => {
    const { governor, reasons, stepAt } = cadenceSetUp(20 * MiB, 18 * MiB);
    stepAt(30_999, 25 * MiB);
    expect(reasons).toEqual([]);
    stepAt(31_000, 25 * MiB);
    expect(reasons).toEqual(["cadence"]);
    // The next one counts from that collection.
    stepAt(60_999, 25 * MiB);
    expect(reasons).toEqual(["cadence"]);
    // A growth collection (at the floor) restarts the count too.
    stepAt(61_000, 64 * MiB);
    expect(reasons).toEqual(["cadence", "growth"]);
    stepAt(90_999, 20 * MiB);
    expect(reasons).toEqual(["cadence", "growth"]);
    stepAt(91_000, 20 * MiB);
    expect(reasons).toEqual(["cadence", "growth", "cadence"]);
    // Not a pacing collection: it never makes the governor stand aside.
    expect(governor.standingAside).toBe(false);
    expect(governor.collections).toBe(3);
  });

  test("above heapBytesMin the cadence does not apply: only growth collects", () => {
    const { reasons, stepAt } = cadenceSetUp(100 * MiB, 100 * MiB);
    stepAt(600_000, 100 * MiB);
    expect(reasons).toEqual([]);
    stepAt(600_100, 150 * MiB);
    expect(reasons).toEqual(["growth"]);
  });

  test("a pacing collection keeps the freed pages while the live item count has not grown since the last collection, and every other collection returns them", () => {
    const { governor, freed, step, heap } = asideSetUp(100 * MiB);
    // Every check at the same instant: never steady for steadyForMs, so every collection is pacing.
    const stepWith = (items: number) => {
      heap.items = items;
      step(0, 1000 * MiB, 100);
    };
    // A load (more items than at the start, then than at each collection): returned.
    stepWith(2_000_000);
    stepWith(3_000_000);
    // Held, then a drain: kept.
    stepWith(3_000_000);
    stepWith(2_500_000);
    stepWith(100);
    // A load again after the drain: returned.
    stepWith(101);
    expect(governor.standingAside).toBe(false);
    expect(freed).toEqual(["growth:return", "growth:return", "growth:keep", "growth:keep", "growth:keep", "growth:return"]);
  });

  test("the cadence and the ceiling return the freed pages whatever the live item count does, and so does pacing without a live item count", () => {
    const cadence = cadenceSetUp(20 * MiB, 18 * MiB);
    cadence.stepAt(31_000, 25 * MiB);
    expect(cadence.reasons).toEqual(["cadence"]);
    expect(cadence.freed).toEqual(["return"]);
    const noItems = setUp(100 * MiB, 100 * MiB);
    noItems.step(150 * MiB);
    noItems.step(150 * MiB);
    expect(noItems.freed).toEqual(["return", "return"]);
    const { collected, freed, step, heap, standAside } = asideSetUp(100 * MiB);
    standAside();
    // Standing aside, fewer items (a drain under liveChangeMin) and the ceiling reached: returned all the same.
    heap.items = 999_000;
    step(6_000, 300 * MiB);
    expect(collected.at(-1)).toEqual([300, true]);
    expect(freed).toEqual(["growth:keep", "growth:keep", "ceiling:return"]);
  });

  test("checks only while requests arrive, every checkMs", () => {
    const { timers, governor, heap, collected } = setUp(100 * MiB, 100 * MiB);
    expect(governor.armed).toBe(false);
    governor.noteRequest();
    governor.noteRequest();
    expect(timers.pending.length).toBe(1);
    expect(timers.pending[0]?.delayMs).toBe(100);
    timers.fire();
    // Requests came during the interval: still armed.
    expect(governor.armed).toBe(true);
    timers.fire();
    // A quiet interval disarms, even with the heap past the trigger on the next reading: no idle collection here.
    expect(governor.armed).toBe(false);
    heap.bytes = 500 * MiB;
    expect(collected).toEqual([]);
    governor.noteRequest();
    timers.fire();
    expect(collected).toEqual([500 * MiB]);
  });

  test("stop() cancels the check and later requests arm nothing", () => {
    const { timers, governor } = setUp(100 * MiB, 100 * MiB);
    governor.noteRequest();
    governor.stop();
    expect(timers.pending.length).toBe(0);
    governor.noteRequest();
    expect(governor.armed).toBe(false);
  });

  test("defaults come from limits.ts", () => {
    const timers = new FakeTimers();
    const governor = new HeapGovernor({ timers, nowMs, heapBytes: () => 0, collect: () => 0 });
    expect(governor.triggerBytes).toBe(heapGovernor.heapBytesMin);
    expect(governor.standingAside).toBe(false);
    expect(heapGovernor.standAsideCeilingFactor).toBeGreaterThan(heapGovernor.growthFactor);
    governor.noteRequest();
    expect(timers.pending[0]?.delayMs).toBe(heapGovernor.checkMs);
  });

  test("mapped pages: dropped once file-backed memory has grown by growthBytes since the last drop (or a lower reading), on the same tick", () => {
    const timers = new FakeTimers();
    const file = { bytes: 300 * MiB };
    const drops: number[] = [];
    const governor = new HeapGovernor({
      timers,
      nowMs,
      heapBytes: () => 10 * MiB,
      collect: () => 0,
      mapped: {
        residentBytes: () => file.bytes,
        drop: () => {
          drops.push(file.bytes);
          file.bytes = 40 * MiB;
        },
        growthBytes: 64 * MiB,
      },
    });
    const step = (bytes: number) => {
      governor.noteRequest();
      file.bytes = bytes;
      timers.fire();
    };
    // The base is the reading at construction (300): 363 is below the trigger, 364 reaches it.
    step(363 * MiB);
    expect(drops).toEqual([]);
    step(364 * MiB);
    expect(drops).toEqual([364 * MiB]);
    expect(governor.mappedDrops).toBe(1);
    // After the drop the base is 40: 103 is below, 104 drops again.
    step(103 * MiB);
    expect(drops.length).toBe(1);
    step(104 * MiB);
    expect(drops.length).toBe(2);
    // A lower reading (the kernel reclaimed pages) lowers the base: from 20, 84 triggers.
    step(20 * MiB);
    step(83 * MiB);
    expect(drops.length).toBe(2);
    step(84 * MiB);
    expect(drops).toEqual([364 * MiB, 104 * MiB, 84 * MiB]);
  });
});
