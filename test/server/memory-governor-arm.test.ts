// Goal: the heap governor's `onArm` hears each burst of requests once: the
// request that arms the check timer after a quiet spell (or the first ever),
// not the requests that find it armed nor the re-arms while requests keep
// arriving, and nothing after stop(). `orq serve` logs it, which is how a
// real server shows which traffic drives the governor. The timer is a fake
// fired by hand.

import { describe, expect, test } from "bun:test";
import type { IdleTimers } from "../../src/server/idle-gc.ts";
import { HeapGovernor } from "../../src/server/memory-governor.ts";

class FakeTimers implements IdleTimers {
  pending: Array<{ callback: () => void; id: number }> = [];
  private nextId = 1;
  set(callback: () => void): unknown {
    const id = this.nextId++;
    this.pending.push({ callback, id });
    return id;
  }
  clear(handle: unknown): void {
    this.pending = this.pending.filter((entry) => entry.id !== handle);
  }
  fire(): void {
    this.pending.shift()?.callback();
  }
}

describe("HeapGovernor onArm", () => {
  test("once per burst: at the first request and after each quiet interval, never on a re-arm", () => {
    const timers = new FakeTimers();
    let arms = 0;
    const governor = new HeapGovernor({
      timers,
      heapBytes: () => 1024,
      nowMs: () => 0,
      collect: () => 1024,
      onArm: () => arms++,
    });
    expect(arms).toBe(0);
    governor.noteRequest();
    governor.noteRequest();
    expect([arms, governor.armed]).toEqual([1, true]);
    // Requests during the interval: the timer re-arms itself, silently.
    timers.fire();
    expect([arms, governor.armed]).toEqual([1, true]);
    // A quiet interval disarms; the next request arms again and is heard.
    timers.fire();
    expect(governor.armed).toBe(false);
    governor.noteRequest();
    expect(arms).toBe(2);
    governor.stop();
    governor.noteRequest();
    expect([arms, governor.armed]).toEqual([2, false]);
  });
});
