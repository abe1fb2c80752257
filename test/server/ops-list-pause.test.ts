// Goal: the list, pause and resume op files decode their fields exactly as
// the contract says (BAD_REQUEST with details.field, TOO_LARGE over a limit,
// probed at limit-1, limit and limit+1; nil = absent; integers only), hand
// the engine camelCase inputs (list's cursor parsed for its state filter),
// and encode replies in snake_case with optional fields left out.

import { describe, expect, test } from "bun:test";
import type { ListQuery } from "../../src/engine/api.ts";
import { defaultLimits } from "../../src/limits.ts";
import { WholeFloat } from "../../src/protocol/msgpack-codec.ts";
import { failureToWire } from "../../src/server/error-mapping.ts";
import type { OpOutcome } from "../../src/server/op-types.ts";
import { opTable } from "../../src/server/op-table.ts";
import { topicCountsToWire } from "../../src/server/ops/wire-encoding.ts";
import { makeOpContext, testNowMs } from "../support/op-context.ts";

const L = defaultLimits;

function run(op: keyof typeof opTable, request: Record<string, unknown>) {
  const ctx = makeOpContext();
  return { outcome: opTable[op].handle(request, "ns1", ctx), engine: ctx.engine };
}

/** The failure as the wire carries it (error-mapping.ts): its code and `details.field`. */
function expectFailure(outcome: OpOutcome, code: string, field: string): void {
  expect(outcome.kind).toBe("failure");
  if (outcome.kind !== "failure") return;
  const wire = failureToWire(outcome.failure);
  expect(wire.code).toBe(code as never);
  expect(wire.details?.field).toBe(field);
}

function expectReply(outcome: OpOutcome): Record<string, unknown> {
  expect(outcome.kind).toBe("reply");
  return outcome.kind === "reply" ? outcome.value : {};
}

describe("list", () => {
  test("defaults: every state, limit 100, first page; the reply has no next when done", () => {
    const { outcome, engine } = run("list", { topic: "t", state: null, after: null, unknown: 1 });
    expect(expectReply(outcome)).toEqual({ items: [] });
    expect(engine.callsOf("list")[0]!.args).toEqual(["ns1", "t", { state: null, limit: 100, after: null }, testNowMs]);
  });

  test("limit at 1, max-1, max and max+1; 0 and floats refused", () => {
    for (const limit of [1, L.listPageMax - 1, L.listPageMax]) {
      const { engine } = run("list", { topic: "t", limit });
      expect((engine.callsOf("list")[0]!.args[2] as ListQuery).limit).toBe(limit);
    }
    expectFailure(run("list", { topic: "t", limit: L.listPageMax + 1 }).outcome, "TOO_LARGE", "limit");
    expectFailure(run("list", { topic: "t", limit: 0 }).outcome, "BAD_REQUEST", "limit");
    expectFailure(run("list", { topic: "t", limit: new WholeFloat(5) }).outcome, "BAD_REQUEST", "limit");
  });

  test("topic required, at most topic_bytes_max; state one of the live states", () => {
    expectFailure(run("list", {}).outcome, "BAD_REQUEST", "topic");
    expectFailure(run("list", { topic: "" }).outcome, "BAD_REQUEST", "topic");
    expectFailure(run("list", { topic: "a".repeat(L.topicBytesMax + 1) }).outcome, "TOO_LARGE", "topic");
    expect(run("list", { topic: "a".repeat(L.topicBytesMax) }).outcome.kind).toBe("reply");
    for (const state of ["ready", "delayed", "waiting", "leased", "dead"]) {
      const { engine } = run("list", { topic: "t", state });
      expect((engine.callsOf("list")[0]!.args[2] as ListQuery).state).toBe(state as never);
    }
    expectFailure(run("list", { topic: "t", state: "ended" }).outcome, "BAD_REQUEST", "state");
  });

  test("after: parsed for its state filter; anything else is BAD_REQUEST naming after", () => {
    const ready = run("list", { topic: "t", after: "r.-5.1700000000000.42" });
    expect((ready.engine.callsOf("list")[0]!.args[2] as ListQuery).after).toEqual({ phase: "ready", priority: -5, deliverAtMs: 1_700_000_000_000, key: 42 });
    const others = run("list", { topic: "t", state: "dead", after: "e.9" });
    expect((others.engine.callsOf("list")[0]!.args[2] as ListQuery).after).toEqual({ phase: "enqueued", key: 9 });
    expect(run("list", { topic: "t", after: "e.-1" }).outcome.kind).toBe("reply");
    for (const [after, state] of [
      ["", null],
      ["r.1.2", null],
      ["e.x", null],
      ["e.1", "ready"],
      ["r.0.0.1", "leased"],
      ["r.0.0.-1", null],
      ["e.99999999999999999", null],
      ["x".repeat(100_000), null],
    ] as const) {
      expectFailure(run("list", { topic: "t", after, state }).outcome, "BAD_REQUEST", "after");
    }
    expectFailure(run("list", { topic: "t", after: 5 }).outcome, "BAD_REQUEST", "after");
  });

  test("next is encoded as the opaque cursor string", () => {
    const ctx = makeOpContext();
    ctx.engine.list = () => ({ items: [], next: { phase: "ready", priority: 3, deliverAtMs: 10, key: 7 } });
    expect(expectReply(opTable.list.handle({ topic: "t" }, "ns1", ctx))).toEqual({ items: [], next: "r.3.10.7" });
  });
});

describe("pause and resume", () => {
  test("pause: for_ms absent (until resume) or 1..pause_ms_max; the reply leaves paused_until_ms out when untimed", () => {
    const untimed = run("pause", { topic: "t", for_ms: null });
    expect(expectReply(untimed.outcome)).toEqual({});
    expect(untimed.engine.callsOf("pause")[0]!.args).toEqual(["ns1", "t", null, testNowMs]);
    for (const forMs of [1, L.pauseMsMax - 1, L.pauseMsMax]) {
      const timed = run("pause", { topic: "t", for_ms: forMs });
      expect(expectReply(timed.outcome)).toEqual({ paused_until_ms: testNowMs + forMs });
    }
    expectFailure(run("pause", { topic: "t", for_ms: L.pauseMsMax + 1 }).outcome, "BAD_REQUEST", "for_ms");
    expectFailure(run("pause", { topic: "t", for_ms: 0 }).outcome, "BAD_REQUEST", "for_ms");
    expectFailure(run("pause", { topic: "t", for_ms: new WholeFloat(10) }).outcome, "BAD_REQUEST", "for_ms");
    expectFailure(run("pause", {}).outcome, "BAD_REQUEST", "topic");
    expectFailure(run("pause", { topic: "a".repeat(L.topicBytesMax + 1) }).outcome, "TOO_LARGE", "topic");
  });

  test("resume: topic required; resumed in the reply; both refused while draining", () => {
    const { outcome, engine } = run("resume", { topic: "t" });
    expect(expectReply(outcome)).toEqual({ resumed: false });
    expect(engine.callsOf("resume")[0]!.args).toEqual(["ns1", "t", testNowMs]);
    expectFailure(run("resume", { topic: 3 }).outcome, "BAD_REQUEST", "topic");
    expect(opTable.pause.allowedWhileDraining).toBe(false);
    expect(opTable.resume.allowedWhileDraining).toBe(false);
    expect(opTable.list.allowedWhileDraining).toBe(true);
    for (const op of ["list", "pause", "resume"] as const) {
      expect(opTable[op].namespace).toBe("required");
      expect(opTable[op].needsAuth).toBe(true);
    }
  });

  test("topics entries: paused always, paused_until_ms only when timed", () => {
    const base = { topic: "t", ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0 };
    expect(topicCountsToWire({ ...base, paused: false })).toEqual({ ...base, paused: false });
    expect(topicCountsToWire({ ...base, paused: true })).toEqual({ ...base, paused: true });
    expect(topicCountsToWire({ ...base, paused: true, pausedUntilMs: 5 })).toEqual({ ...base, paused: true, paused_until_ms: 5 });
  });
});
