// Goal: replies queued in one turn go out in one write; a partial write keeps
// the unsent tail and resends it on drain, in order, with nothing lost or
// duplicated; a closed socket drops everything; the buffer comes from the
// pool and goes back to it once written, and a big turn grows past it.

import { describe, expect, test } from "bun:test";
import { OutputBufferPool } from "../../src/server/output-buffers.ts";
import { OutputQueue, type ByteSink } from "../../src/server/output-queue.ts";

class ThrottledSink implements ByteSink {
  written: number[] = [];
  writes = 0;
  constructor(public acceptBytes: number) {}
  write(data: Uint8Array, byteOffset: number, byteLength: number): number {
    this.writes++;
    const n = Math.min(this.acceptBytes, byteLength);
    for (let i = 0; i < n; i++) this.written.push(data[byteOffset + i]!);
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
    const queue = new OutputQueue(sink, () => {}, new OutputBufferPool(), s.schedule);
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
    const queue = new OutputQueue(sink, () => progress++, new OutputBufferPool(), s.schedule);
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
    const queue = new OutputQueue(sink, () => {}, new OutputBufferPool(), s.schedule);
    queue.push(new Uint8Array(10));
    s.run();
    expect(queue.unsentBytes).toBe(0);
    queue.push(new Uint8Array(10));
    expect(queue.unsentBytes).toBe(0);
  });

  test("pushFrame writes the 4-byte big-endian length, then the body", () => {
    const sink = new ThrottledSink(1 << 20);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, new OutputBufferPool(), s.schedule);
    queue.pushFrame(new Uint8Array(300).fill(7));
    queue.push(new Uint8Array([9]));
    s.run();
    expect(sink.written.slice(0, 4)).toEqual([0, 0, 1, 44]);
    expect(sink.written.length).toBe(4 + 300 + 1);
    expect(sink.written.slice(4, 304).every((b) => b === 7)).toBe(true);
    expect(sink.written[304]).toBe(9);
  });

  test("push with a length queues only the start of its bytes, short (copied by loop) or long (through a view) alike", () => {
    const sink = new ThrottledSink(1 << 20);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, new OutputBufferPool(), s.schedule);
    const source = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff);
    const expected: number[] = [];
    for (const length of [1, 63, 64, 65, 500]) {
      queue.push(source, length);
      expected.push(...source.subarray(0, length));
    }
    source.fill(0); // copied when pushed: later changes to the source do not show
    s.run();
    expect(sink.written).toEqual(expected);
  });

  test("the buffer is taken from the pool for a turn and given back once written", () => {
    const pool = new OutputBufferPool(64, 4);
    const sink = new ThrottledSink(1 << 20);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, pool, s.schedule);
    queue.push(new Uint8Array([1, 2, 3]));
    expect(pool.pooled).toBe(0);
    s.run();
    expect(pool.pooled).toBe(1);
    // The next turn reuses it: nothing new is pooled, and the bytes are the new ones only.
    queue.push(new Uint8Array([4]));
    expect(pool.pooled).toBe(0);
    s.run();
    expect(pool.pooled).toBe(1);
    expect(sink.written).toEqual([1, 2, 3, 4]);
  });

  test("a turn larger than a pooled buffer grows into a bigger one, which is not pooled", () => {
    const pool = new OutputBufferPool(8, 4);
    const sink = new ThrottledSink(1 << 20);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, pool, s.schedule);
    const expected: number[] = [];
    for (let i = 0; i < 10; i++) {
      const frame = new Uint8Array([i, i + 100, i + 200]);
      queue.push(frame);
      expected.push(...frame);
    }
    expect(queue.unsentBytes).toBe(30);
    s.run();
    expect(sink.written).toEqual(expected);
    expect(sink.writes).toBe(1);
    // The 8-byte buffer the turn started with went back when it grew; the grown one did not.
    expect(pool.pooled).toBe(1);
  });

  test("frames queued behind a tail that must move are kept in order", () => {
    const pool = new OutputBufferPool(8, 4);
    const sink = new ThrottledSink(5);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, pool, s.schedule);
    queue.push(new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
    s.run();
    expect(sink.written).toEqual([1, 2, 3, 4, 5]);
    // The tail [6, 7] sits at the end of the buffer; four more bytes move it to the front.
    queue.push(new Uint8Array([8, 9, 10, 11]));
    expect(queue.unsentBytes).toBe(6);
    sink.acceptBytes = 100;
    queue.drain();
    expect(sink.written).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(queue.unsentBytes).toBe(0);
    expect(pool.pooled).toBe(1);
  });

  test("a closed queue gives its buffer back and ignores later frames", () => {
    const pool = new OutputBufferPool(64, 4);
    const sink = new ThrottledSink(0);
    const s = manualScheduler();
    const queue = new OutputQueue(sink, () => {}, pool, s.schedule);
    queue.push(new Uint8Array([1, 2]));
    s.run();
    expect(queue.unsentBytes).toBe(2);
    queue.close();
    expect(pool.pooled).toBe(1);
    queue.push(new Uint8Array([3]));
    s.run();
    expect(queue.unsentBytes).toBe(0);
  });
});

describe("OutputBufferPool", () => {
  test("keeps at most pooledMax buffers, only of its own size", () => {
    const pool = new OutputBufferPool(16, 2);
    const a = pool.take(10);
    const b = pool.take(16);
    const c = pool.take(1);
    const big = pool.take(17);
    expect([a.length, b.length, c.length, big.length]).toEqual([16, 16, 16, 17]);
    pool.give(big);
    expect(pool.pooled).toBe(0);
    pool.give(a);
    pool.give(b);
    pool.give(c);
    expect(pool.pooled).toBe(2);
    expect(pool.take(5)).toBe(b);
  });
});
