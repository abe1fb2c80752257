// Goal: schedules in the engine, on a ManualClock: every_ms and cron ticks
// each enqueue one item keyed `schedule:<name>:<tick_at_ms>`; a daily 02:30
// in Europe/Berlin fires once on the day the hour is skipped (late March) and
// once on the day it repeats (late October); missed ticks across a restart
// follow catch_up ("one": one item for the latest, "none": none); a tick whose
// commit was lost fires again once; replacement and removal; the limits; a
// tick the namespace quota refuses is counted, not retried; a tick whose
// commit fails is logged and the schedule shows the tick before it.

import { describe, expect, test } from "bun:test";
import { EnqueueItem } from "../../../src/engine/ops/enqueue-item.ts";
import type { ScheduleInput } from "../../../src/engine/api.ts";
import { failure, Harness, unwrap } from "../support/harness.ts";

function scheduleInput(name: string, overrides: Partial<Omit<ScheduleInput, "item">> = {}, topic = "t", itemFields: Partial<EnqueueItem> = {}): ScheduleInput {
  const item = Object.assign(new EnqueueItem(), { topic, ...itemFields });
  return { name, cron: null, everyMs: 1000, timezone: "UTC", catchUp: "one", item, ...overrides };
}

/** Every item of a topic, ready or delayed, with its key (the tick it came from). */
function tickKeys(h: Harness, ns: string, topic: string): string[] {
  const page = h.engine.list(ns, topic, { state: null, limit: 1000, after: null }, h.now);
  return page.items.map((state) => state.key ?? "").sort();
}

function only(h: Harness, ns: string) {
  const list = h.engine.scheduleList(ns, { limit: 10, after: null }).schedules;
  expect(list).toHaveLength(1);
  return list[0]!;
}

describe("schedules", () => {
  test("every_ms ticks each enqueue one keyed item; last_at_ms and last_id follow", async () => {
    const h = new Harness();
    const anchor = h.now;
    const set = await h.settle(h.engine.schedule("n", scheduleInput("s", {}, "t", { priority: 7 }), h.now));
    expect(set).toEqual({ name: "s", nextAtMs: anchor + 1000 });
    h.advance(999);
    expect(tickKeys(h, "n", "t")).toEqual([]);
    h.advance(1);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`]);
    const view = only(h, "n");
    expect(view.lastAtMs).toBe(anchor + 1000);
    expect(view.nextAtMs).toBe(anchor + 2000);
    const delivered = await h.dequeue("n", [["t", 5]]);
    expect(delivered.map((d) => [d.id, d.priority])).toEqual([[view.lastId!, 7]]);
    // A late tick (the loop was busy for 3.5 periods) fires once, for the latest tick due.
    h.advance(3500);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`, `schedule:s:${anchor + 4000}`]);
    expect(only(h, "n").nextAtMs).toBe(anchor + 5000);
    h.check();
  });

  test("a daily 02:30 in Europe/Berlin fires once a day across both daylight-saving changes", async () => {
    const h = new Harness();
    const fired = async (fromUtc: number, days: number): Promise<string[]> => {
      h.clock.set(fromUtc);
      await h.settle(h.engine.schedule("n", scheduleInput("daily", { cron: "30 2 * * *", everyMs: null, timezone: "Europe/Berlin" }, "berlin"), h.now));
      const seen: string[] = [];
      for (let hour = 0; hour < days * 24; hour++) {
        h.advance(15 * 60 * 1000);
        h.advance(45 * 60 * 1000);
        await h.writer.drain();
        const last = only(h, "n").lastAtMs;
        if (last !== null && !seen.includes(new Date(last).toISOString())) seen.push(new Date(last).toISOString());
      }
      await h.settle(h.engine.unschedule("n", "daily", h.now));
      return seen;
    };
    // 29 March 2026: 02:00 CET jumps to 03:00 CEST, so 02:30 never happens; the tick comes at 03:00 CEST.
    expect(await fired(Date.UTC(2026, 2, 27, 0, 0), 4)).toEqual([
      "2026-03-27T01:30:00.000Z",
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    // 25 October 2026: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice; it fires once.
    expect(await fired(Date.UTC(2026, 9, 23, 0, 0), 4)).toEqual([
      "2026-10-23T00:30:00.000Z",
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
    // One item per tick, each under its own key: eight in all.
    expect(tickKeys(h, "n", "berlin")).toHaveLength(8);
    h.check();
  });

  test('catch_up "one": ticks missed while down give one item, for the latest, at start', async () => {
    const h = new Harness();
    const anchor = h.now;
    await h.settle(h.engine.schedule("n", scheduleInput("s"), h.now));
    h.advance(1000);
    await h.restart();
    // Down for 10.5 s: ten ticks missed.
    h.clock.advance(10_500);
    h.crash();
    expect(only(h, "n").lastAtMs).toBe(anchor + 1000);
    h.engine.tick(h.now);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`, `schedule:s:${anchor + 11_000}`]);
    h.advance(500);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toHaveLength(3);
    h.check();
  });

  test('catch_up "none": ticks missed while down give nothing; the next one fires', async () => {
    const h = new Harness();
    const anchor = h.now;
    await h.settle(h.engine.schedule("n", scheduleInput("s", { catchUp: "none" }), h.now));
    h.advance(1000);
    await h.restart();
    h.clock.advance(10_500);
    h.crash();
    h.engine.tick(h.now);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`]);
    expect(only(h, "n").nextAtMs).toBe(anchor + 12_000);
    h.advance(500);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`, `schedule:s:${anchor + 12_000}`]);
  });

  test("a tick whose commit was lost in a crash fires again once after the restart", async () => {
    const h = new Harness();
    const anchor = h.now;
    await h.settle(h.engine.schedule("n", scheduleInput("s"), h.now));
    h.store.pauseCommits();
    h.advance(1000);
    // The item and the schedule's last tick were in that commit: neither is on disk.
    h.crash();
    expect(only(h, "n").lastAtMs).toBe(null);
    h.engine.tick(h.now);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`]);
    h.engine.tick(h.now);
    await h.restart();
    h.engine.tick(h.now);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`]);
    h.check();
  });

  test("a tick whose commit fails shows the tick before it again, and is logged, not retried", async () => {
    const h = new Harness({ shards: 1 });
    const refusals: string[] = [];
    h.engine.onScheduleTickRefused = (_ns, _name, _tickAtMs, message) => refusals.push(message);
    const anchor = h.now;
    await h.settle(h.engine.schedule("n", scheduleInput("s"), h.now));
    h.advance(1000);
    await h.writer.drain();
    h.store.failShard(0);
    h.advance(1000);
    await h.writer.drain();
    // One turn: the failed commit's listeners run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(only(h, "n").lastAtMs).toBe(anchor + 1000);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain("the tick's commit failed");
    expect(only(h, "n").nextAtMs).toBe(anchor + 3000);
  });

  test("schedule replaces by name; unschedule removes, durably", async () => {
    const h = new Harness();
    await h.settle(h.engine.schedule("n", scheduleInput("s"), h.now));
    await h.settle(h.engine.schedule("n", scheduleInput("s", { everyMs: 5000 }, "b"), h.now));
    expect(h.engine.scheduleList("n", { limit: 10, after: null }).schedules.map((s) => [s.name, s.everyMs, s.item.topic])).toEqual([["s", 5000, "b"]]);
    h.advance(1000);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([]);
    h.advance(4000);
    await h.writer.drain();
    expect(tickKeys(h, "n", "b")).toHaveLength(1);
    await h.restart();
    expect(only(h, "n").everyMs).toBe(5000);
    expect(await h.settle(h.engine.unschedule("n", "s", h.now))).toEqual({ removed: true });
    expect(await h.settle(h.engine.unschedule("n", "s", h.now))).toEqual({ removed: false });
    await h.restart();
    expect(h.engine.scheduleList("n", { limit: 10, after: null }).schedules).toEqual([]);
    h.advance(10_000);
    await h.writer.drain();
    expect(tickKeys(h, "n", "b")).toHaveLength(1);
    h.check();
  });

  test("the list pages by name", async () => {
    const h = new Harness();
    for (const name of ["c", "a", "b"]) await h.settle(h.engine.schedule("n", scheduleInput(name), h.now));
    const first = h.engine.scheduleList("n", { limit: 2, after: null });
    expect([first.schedules.map((s) => s.name), first.next]).toEqual([["a", "b"], "b"]);
    const second = h.engine.scheduleList("n", { limit: 2, after: first.next });
    expect([second.schedules.map((s) => s.name), second.next]).toEqual([["c"], null]);
  });

  test("schedules per namespace and per server: limit - 1 and limit pass, a new one past it is over_limit at name", async () => {
    const h = new Harness({ limits: { schedulesPerNamespaceMax: 2, schedulesMax: 3 } });
    await h.settle(h.engine.schedule("n", scheduleInput("a"), h.now));
    await h.settle(h.engine.schedule("n", scheduleInput("b"), h.now));
    const refused = failure(h.engine.schedule("n", scheduleInput("c"), h.now));
    expect([refused.kind, refused.at]).toEqual(["over_limit", { kind: "scheduleName" }]);
    // Replacing at the limit is no new schedule.
    unwrap(h.engine.schedule("n", scheduleInput("b", { everyMs: 2000 }), h.now));
    await h.settle(h.engine.schedule("m", scheduleInput("a"), h.now));
    expect(failure(h.engine.schedule("o", scheduleInput("a"), h.now)).kind).toBe("over_limit");
  });

  test("a bad requires is refused at schedule time with its place in item", () => {
    const h = new Harness();
    const refused = failure(h.engine.schedule("n", scheduleInput("s", {}, "t", { requires: { gpu: { in: [] } } }), h.now));
    expect(refused.kind).toBe("invalid_value");
    expect(refused.at?.kind).toBe("scheduleItem");
  });

  test("a tick the namespace quota refuses is counted and not retried", async () => {
    const h = new Harness({ namespaces: { n: { enqueuePerMinute: 1 } } });
    const refusals: number[] = [];
    h.engine.onScheduleTickRefused = (_ns, _name, tickAtMs) => refusals.push(tickAtMs);
    const anchor = h.now;
    await h.settle(h.engine.schedule("n", scheduleInput("s"), h.now));
    h.advance(1000);
    h.advance(1000);
    await h.writer.drain();
    expect(tickKeys(h, "n", "t")).toEqual([`schedule:s:${anchor + 1000}`]);
    expect(refusals).toEqual([anchor + 2000]);
    expect(h.engine.stats(null, h.now).engine?.scheduleTicks).toEqual({ enqueued: 1, duplicate: 0, refused: 1, failed: 0 });
    expect(only(h, "n").nextAtMs).toBe(anchor + 3000);
  });
});
