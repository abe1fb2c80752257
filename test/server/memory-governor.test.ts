// Goal: the heap governor collects once the heap has grown by growthFactor
// since the last collection (probed just below and at the trigger), never
// below heapBytesMin, takes the size after a collection (or a smaller one
// JavaScriptCore's own collection left) as the new base, checks only while
// requests arrive (a quiet interval disarms it), and never after stop(). The
// timer is a fake fired by hand and the heap size a number the test sets.

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

function setUp(startBytes: number, afterCollectBytes: number) {
  const timers = new FakeTimers();
  const heap = { bytes: startBytes };
  const collected: number[] = [];
  const governor = new HeapGovernor({
    timers,
    heapBytes: () => heap.bytes,
    collect: (bytes) => {
      collected.push(bytes);
      heap.bytes = afterCollectBytes;
    },
    growthFactor: 1.5,
    checkMs: 100,
    heapBytesMin: 64 * MiB,
  });
  /** A request, then the check interval ends. */
  const step = (bytes: number) => {
    governor.noteRequest();
    heap.bytes = bytes;
    timers.fire();
  };
  return { timers, heap, collected, governor, step };
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
    const governor = new HeapGovernor({ timers, heapBytes: () => 0, collect: () => {} });
    expect(governor.triggerBytes).toBe(heapGovernor.heapBytesMin);
    governor.noteRequest();
    expect(timers.pending[0]?.delayMs).toBe(heapGovernor.checkMs);
  });

  test("mapped pages: dropped once file-backed memory has grown by growthBytes since the last drop (or a lower reading), on the same tick", () => {
    const timers = new FakeTimers();
    const file = { bytes: 300 * MiB };
    const drops: number[] = [];
    const governor = new HeapGovernor({
      timers,
      heapBytes: () => 10 * MiB,
      collect: () => {},
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
