// Goal: the schedule, unschedule and schedules op files decode their fields
// as the contract says: `item` through enqueue's own item reader, with field
// paths under `item` (`item.priority`, `item.payload`), key, after and
// deliver_at_ms refused in it; exactly one of cron and every_ms (every_ms at
// 999, 1000); a cron of 4 or 7 fields, an unreadable one and an unknown zone
// refused with their field; name at 255 and 256 bytes; defaults (UTC, "one");
// the engine gets camelCase inputs; replies and pages in snake_case, the
// item's fields too.

import { describe, expect, test } from "bun:test";
import type { ScheduleInput } from "../../src/engine/api.ts";
import { defaultLimits } from "../../src/limits.ts";
import { failureToWire } from "../../src/server/error-mapping.ts";
import type { OpOutcome } from "../../src/server/op-types.ts";
import { opTable } from "../../src/server/op-table.ts";
import { makeOpContext } from "../support/op-context.ts";

const L = defaultLimits;

function run(op: keyof typeof opTable, request: Record<string, unknown>) {
  const ctx = makeOpContext();
  return { outcome: opTable[op].handle(request, "ns1", ctx), engine: ctx.engine };
}

function expectFailure(outcome: OpOutcome, code: string, field: string): void {
  expect(outcome.kind).toBe("failure");
  if (outcome.kind !== "failure") return;
  const wire = failureToWire(outcome.failure);
  expect([wire.code, wire.details?.field]).toEqual([code as never, field]);
}

const item = { topic: "t" };

describe("schedule", () => {
  test("defaults: timezone UTC, catch_up one; the engine gets the item as enqueue decodes it", () => {
    const { outcome, engine } = run("schedule", { name: "s", every_ms: 1000, item: { topic: "t", priority: -4, payload: new Uint8Array([1]), delay_ms: 5 } });
    expect(outcome.kind).toBe("reply");
    const input = engine.callsOf("schedule")[0]!.args[1] as ScheduleInput;
    expect([input.name, input.cron, input.everyMs, input.timezone, input.catchUp]).toEqual(["s", null, 1000, "UTC", "one"]);
    expect([input.item.topic, input.item.priority, input.item.delayMs, input.item.key]).toEqual(["t", -4, 5, null]);
  });

  test("a cron expression of 5 or 6 fields in a zone passes; 4 or 7 fields, a bad field or an unknown zone does not", () => {
    for (const cron of ["30 2 * * *", "*/5 30 2 * * *"]) expect(run("schedule", { name: "s", cron, timezone: "Europe/Berlin", item }).outcome.kind).toBe("reply");
    expectFailure(run("schedule", { name: "s", cron: "2 * * *", item }).outcome, "BAD_REQUEST", "cron");
    expectFailure(run("schedule", { name: "s", cron: "0 0 0 1 1 * 2030", item }).outcome, "BAD_REQUEST", "cron");
    expectFailure(run("schedule", { name: "s", cron: "61 * * * *", item }).outcome, "BAD_REQUEST", "cron");
    expectFailure(run("schedule", { name: "s", cron: "* * * * *", timezone: "Mars/Olympus", item }).outcome, "BAD_REQUEST", "timezone");
    expectFailure(run("schedule", { name: "s", cron: "x".repeat(L.cronBytesMax + 1), item }).outcome, "TOO_LARGE", "cron");
  });

  test("exactly one of cron and every_ms; every_ms from 1000", () => {
    expectFailure(run("schedule", { name: "s", item }).outcome, "BAD_REQUEST", "cron");
    expectFailure(run("schedule", { name: "s", cron: "* * * * *", every_ms: 1000, item }).outcome, "BAD_REQUEST", "cron");
    expectFailure(run("schedule", { name: "s", every_ms: 999, item }).outcome, "BAD_REQUEST", "every_ms");
    expect(run("schedule", { name: "s", every_ms: 1000, item }).outcome.kind).toBe("reply");
  });

  test("name: 255 bytes pass, 256 are TOO_LARGE, empty or absent BAD_REQUEST", () => {
    expect(run("schedule", { name: "n".repeat(L.scheduleNameBytesMax), every_ms: 1000, item }).outcome.kind).toBe("reply");
    expectFailure(run("schedule", { name: "n".repeat(L.scheduleNameBytesMax + 1), every_ms: 1000, item }).outcome, "TOO_LARGE", "name");
    expectFailure(run("schedule", { name: "", every_ms: 1000, item }).outcome, "BAD_REQUEST", "name");
    expectFailure(run("schedule", { every_ms: 1000, item }).outcome, "BAD_REQUEST", "name");
  });

  test("the item is checked as enqueue checks it, with paths under item; key, after and deliver_at_ms are refused", () => {
    expectFailure(run("schedule", { name: "s", every_ms: 1000 }).outcome, "BAD_REQUEST", "item");
    expectFailure(run("schedule", { name: "s", every_ms: 1000, item: "t" }).outcome, "BAD_REQUEST", "item");
    expectFailure(run("schedule", { name: "s", every_ms: 1000, item: {} }).outcome, "BAD_REQUEST", "item.topic");
    expectFailure(run("schedule", { name: "s", every_ms: 1000, item: { topic: "t", priority: 2 ** 31 } }).outcome, "BAD_REQUEST", "item.priority");
    expectFailure(run("schedule", { name: "s", every_ms: 1000, item: { topic: "t", payload: new Uint8Array(L.payloadBytesMax + 1) } }).outcome, "TOO_LARGE", "item.payload");
    for (const field of ["key", "after", "deliver_at_ms"]) {
      expectFailure(run("schedule", { name: "s", every_ms: 1000, item: { topic: "t", [field]: field === "after" ? ["1:1"] : field === "key" ? "k" : 5 } }).outcome, "BAD_REQUEST", `item.${field}`);
    }
    const failed = run("schedule", { name: "s", every_ms: 1000, item: { topic: "t", priority: "high" } }).outcome;
    expect(failed.kind === "failure" && failureToWire(failed.failure).details?.index).toBeUndefined();
  });
});

describe("unschedule and schedules", () => {
  test("unschedule needs a name; schedules pages with limit lowered to the maximum", () => {
    expectFailure(run("unschedule", {}).outcome, "BAD_REQUEST", "name");
    expect(run("unschedule", { name: "s" }).engine.callsOf("unschedule")[0]!.args.slice(0, 2)).toEqual(["ns1", "s"]);
    const { engine } = run("schedules", { limit: L.groupsPageMax + 1, after: "a" });
    expect(engine.callsOf("schedules")[0]!.args).toEqual(["ns1", { limit: L.groupsPageMax, after: "a" }]);
    expectFailure(run("schedules", { limit: 0 }).outcome, "BAD_REQUEST", "limit");
  });
});
