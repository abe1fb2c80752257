// Goal: the idle GC hint fires once a whole check interval passes without a
// request, only after at least requestsMin requests since the last hint
// (probed at requestsMin - 1, requestsMin and requestsMin + 1), never while
// requests keep arriving, at most once per idle period, with no timer armed
// on a server without traffic, and never after stop(). The full (blocking)
// collection follows a hint only when no request at all arrived in the
// fullIdleMs after it. The timer is a fake
// fired by hand: no real sleeping. The timer is armed at the first request of
// a burst, so the interval it first ends saw the burst; the hint comes at the
// end of the next, quiet, one.

import { describe, expect, test } from "bun:test";
import { IdleGc, idleGcFallenFraction, idleGcFullIdleMs, idleGcIdleMs, idleGcRequestsMin, type IdleTimers } from "../../src/server/idle-gc.ts";

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
  /** Fires the one pending timer (the class arms at most one). */
  fire(): void {
    expect(this.pending.length).toBe(1);
    const entry = this.pending.shift();
    entry?.callback();
  }
}

function setUp(requestsMin = 3) {
  const timers = new FakeTimers();
  const memory = { residentBytes: 1000 };
  // Hints as their request counts; full collections as "full".
  const collected: Array<number | "full"> = [];
  const gc = new IdleGc({
    timers,
    collect: (kind, requests) => collected.push(kind === "full" ? "full" : requests),
    residentBytes: () => memory.residentBytes,
    idleMs: 1000,
    fullIdleMs: 10_000,
    requestsMin,
  });
  const requests = (n: number) => {
    for (let i = 0; i < n; i += 1) gc.noteRequest();
  };
  return { timers, collected, gc, requests, memory };
}

describe("IdleGc", () => {
  test("defaults: 1 s idle, 10 s more before a full collection, 1,000 requests", () => {
    expect(idleGcIdleMs).toBe(1000);
    expect(idleGcFullIdleMs).toBe(10_000);
    expect(idleGcRequestsMin).toBe(1000);
    const timers = new FakeTimers();
    const gc = new IdleGc({ timers, collect: () => {}, residentBytes: () => 0 });
    gc.noteRequest();
    expect(timers.pending.map((entry) => entry.delayMs)).toEqual([1000]);
    gc.stop();
  });

  test("no traffic: nothing armed, nothing collected", () => {
    const { timers, collected, gc } = setUp();
    expect(gc.armed).toBe(false);
    expect(timers.pending).toHaveLength(0);
    expect(collected).toEqual([]);
  });

  test("requestsMin - 1 requests then idle: no hint, and the timer disarms", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(2);
    timers.fire();
    timers.fire();
    expect(collected).toEqual([]);
    expect(gc.armed).toBe(false);
  });

  test("requestsMin requests then idle: one hint, then the full-collection check is armed", () => {
    const { timers, collected, requests } = setUp(3);
    requests(3);
    expect(timers.pending).toHaveLength(1);
    timers.fire();
    expect(collected).toEqual([]);
    timers.fire();
    expect(collected).toEqual([3]);
    expect(timers.pending.map((entry) => entry.delayMs)).toEqual([10_000]);
  });

  test("requestsMin + 1 requests then idle: one hint, counting all", () => {
    const { timers, collected, requests } = setUp(3);
    requests(4);
    timers.fire();
    timers.fire();
    expect(collected).toEqual([4]);
  });

  test("requests during the interval postpone the hint until a quiet one", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(2);
    // The timer was armed at 2 requests; 3 more arrive before it fires: not idle.
    requests(3);
    timers.fire();
    expect(collected).toEqual([]);
    expect(gc.armed).toBe(true);
    requests(1);
    timers.fire();
    expect(collected).toEqual([]);
    // A whole interval with no request: now it hints.
    timers.fire();
    expect(collected).toEqual([6]);
  });

  test("silence for fullIdleMs after the hint: one full collection, then nothing armed", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(3);
    timers.fire();
    timers.fire();
    timers.fire();
    expect(collected).toEqual([3, "full"]);
    expect(gc.armed).toBe(false);
    expect(timers.pending).toHaveLength(0);
  });

  test("memory fallen since the hint (JSC collected on its own): no full collection", () => {
    // idleGcFallenFraction is 0.2: from 1000 bytes, 800 counts as fallen, 801 does not.
    expect(idleGcFallenFraction).toBe(0.2);
    for (const [afterBytes, expected] of [[801, [3, "full"]], [800, [3]], [799, [3]]] as const) {
      const { timers, collected, gc, requests, memory } = setUp(3);
      requests(3);
      timers.fire();
      timers.fire();
      memory.residentBytes = afterBytes;
      timers.fire();
      expect(collected).toEqual([...expected]);
      expect(gc.armed).toBe(false);
    }
  });

  test("one request after the hint: no full collection; watching resumes", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(3);
    timers.fire();
    timers.fire();
    expect(collected).toEqual([3]);
    // The full-collection check is pending, so this request arms nothing new.
    requests(1);
    expect(timers.pending.map((entry) => entry.delayMs)).toEqual([10_000]);
    timers.fire();
    expect(collected).toEqual([3]);
    // Back to the 1 s check; that interval is quiet, but 1 request is below the minimum.
    expect(timers.pending.map((entry) => entry.delayMs)).toEqual([1000]);
    timers.fire();
    expect(collected).toEqual([3]);
    expect(gc.armed).toBe(false);
  });

  test("requests after a hint accumulate towards the next one", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(3);
    timers.fire();
    timers.fire();
    requests(1);
    timers.fire(); // the full-collection check: traffic came, so no full collection
    timers.fire(); // quiet, 1 < 3: disarms
    requests(2);
    timers.fire(); // saw the 2 requests
    timers.fire(); // quiet, 3 >= 3: hint
    expect(collected).toEqual([3, 3]);
    timers.fire(); // silence after it: full
    expect(collected).toEqual([3, 3, "full"]);
    expect(gc.armed).toBe(false);
  });

  test("stop cancels the pending check and later requests arm nothing", () => {
    const { timers, collected, gc, requests } = setUp(3);
    requests(5);
    expect(timers.pending).toHaveLength(1);
    gc.stop();
    expect(timers.pending).toHaveLength(0);
    requests(5);
    expect(timers.pending).toHaveLength(0);
    expect(collected).toEqual([]);
  });
});
