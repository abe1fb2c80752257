// Goal: the server's one timer is armed for the engine's earliest deadline,
// calls tick when it passes, re-arms for the next one, is not re-armed for a
// later deadline, and stops for good on stop().

import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { DeadlineTimer } from "../../src/server/deadline-timer.ts";

function fakeEngine(deadlines: number[]) {
  const ticks: number[] = [];
  return {
    ticks,
    deadlines,
    nextDeadlineMs: () => deadlines[0] ?? null,
    tick(nowMs: number) {
      ticks.push(nowMs);
      while (deadlines.length > 0 && deadlines[0]! <= nowMs) deadlines.shift();
    },
  };
}

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("DeadlineTimer", () => {
  test("a due deadline fires tick and the timer re-arms for the next due one", async () => {
    const clock = new ManualClock(1000);
    const engine = fakeEngine([500, 900]); // both already due
    const timer = new DeadlineTimer(engine, clock);
    timer.rearm();
    await settle();
    await settle();
    expect(engine.ticks).toEqual([1000]);
    expect(engine.deadlines).toEqual([]);
    timer.stop();
  });

  test("no deadline: nothing armed; stop() prevents later ticks", async () => {
    const clock = new ManualClock(1000);
    const engine = fakeEngine([]);
    const timer = new DeadlineTimer(engine, clock);
    timer.rearm();
    engine.deadlines.push(10);
    timer.stop();
    timer.rearm();
    await settle();
    expect(engine.ticks).toEqual([]);
  });
});
