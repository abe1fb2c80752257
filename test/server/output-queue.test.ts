// Goal: replies queued in one turn go out in one write; a partial write keeps
// the unsent tail and resends it on drain, in order, with nothing lost or
// duplicated; a closed socket drops everything.

import { describe, expect, test } from "bun:test";
import { OutputQueue, type ByteSink } from "../../src/server/output-queue.ts";

class ThrottledSink implements ByteSink {
  written: number[] = [];
  writes = 0;
  constructor(public acceptBytes: number) {}
  write(data: Uint8Array): number {
    this.writes++;
    const n = Math.min(this.acceptBytes, data.length);
    for (let i = 0; i < n; i++) this.written.push(data[i]!);
    return n;
  }
}

function manualScheduler() {
  const tasks: Array<() => void> = [];
  return { schedule: (t: () => void) => tasks.push(t), run: () => tasks.splice(0).forEach((t) => t()) };
}

describe("OutputQueue", () => {
  test("frames pushed in one turn are written with one write", () => {
    const sink = new ThrottledSink(1 << 20);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, s.schedule);
    queue.push(new Uint8Array([1, 2]));
    queue.push(new Uint8Array([3]));
    queue.push(new Uint8Array([4, 5, 6]));
    expect(queue.unsentBytes).toBe(6);
    s.run();
    expect(sink.writes).toBe(1);
    expect(sink.written).toEqual([1, 2, 3, 4, 5, 6]);
    expect(queue.unsentBytes).toBe(0);
  });

  test("partial writes keep the tail; drain resends it before newer frames", () => {
    const sink = new ThrottledSink(2);
    const s = manualScheduler();
    let progress = 0;
    const queue = new OutputQueue(sink, () => progress++, s.schedule);
    queue.push(new Uint8Array([1, 2, 3, 4, 5]));
    s.run();
    expect(sink.written).toEqual([1, 2]);
    expect(queue.unsentBytes).toBe(3);
    queue.push(new Uint8Array([6, 7]));
    s.run(); // must not write the new frame ahead of the tail
    expect(sink.written).toEqual([1, 2]);
    sink.acceptBytes = 0;
    queue.drain(); // socket still full: accepts nothing
    expect(queue.unsentBytes).toBe(5);
    sink.acceptBytes = 100;
    queue.drain();
    expect(sink.written).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(queue.unsentBytes).toBe(0);
    expect(progress).toBeGreaterThan(0);
  });

  test("a closed socket (-1) drops the queue", () => {
    const sink: ByteSink = { write: () => -1 };
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, s.schedule);
    queue.push(new Uint8Array(10));
    s.run();
    expect(queue.unsentBytes).toBe(0);
    queue.push(new Uint8Array(10));
    expect(queue.unsentBytes).toBe(0);
  });
});
