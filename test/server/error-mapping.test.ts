// Goal: every kind of engine failure (engine/failures/failure-kind.ts) has the wire
// code the contract gave it before kinds existed, through the one mapping
// (server/error-mapping.ts): a kind added without a code here fails this
// test (and wireCodeOfKind, a total record, fails the type check), and a
// moved failure's details keep the wire's order.

import { describe, expect, test } from "bun:test";
import type { FailureKind } from "../../src/engine/api.ts";
import { failureKinds } from "../../src/engine/failures/failure-kind.ts";
import { isErrorCode, type ErrorCode } from "../../src/protocol/error-codes.ts";
import { failureToWire, wireCodeOfKind } from "../../src/server/error-mapping.ts";

/** The kinds each wire code stands for: the codes the engine returned directly before it had kinds of its own. */
const kindsOfCode: Array<[ErrorCode, string[]]> = [
  ["BAD_REQUEST", ["invalid_value"]],
  ["TOO_LARGE", ["over_limit"]],
  ["NOT_FOUND", ["unknown_dependency"]],
  ["RATE_LIMITED", ["rate_limited"]],
  ["UNAVAILABLE", ["storage_unavailable", "server_full", "quota_unreachable", "shard_unserved"]],
  ["MOVED", ["shard_elsewhere"]],
];
const expectedCode: Record<string, ErrorCode> = Object.fromEntries(kindsOfCode.flatMap(([code, kinds]) => kinds.map((kind) => [kind, code])));

describe("wireCodeOfKind", () => {
  for (const kind of failureKinds) {
    test(`${kind} is ${expectedCode[kind] ?? "(no code in this test)"} on the wire`, () => {
      expect(Object.keys(expectedCode)).toContain(kind);
      const wire = failureToWire({ kind, message: "m" });
      expect(isErrorCode(wire.code)).toBe(true);
      expect(wire).toEqual({ code: expectedCode[kind] as ErrorCode, message: "m" });
    });
  }

  test("maps exactly the engine's kinds, none more", () => {
    expect(Object.keys(wireCodeOfKind).sort()).toEqual([...failureKinds].sort());
    expect(Object.keys(expectedCode).sort()).toEqual([...failureKinds].sort());
  });

  test("the kinds are distinct", () => {
    expect(new Set<FailureKind>(failureKinds).size).toBe(failureKinds.length);
  });
});

describe("failureToWire details", () => {
  test("shard_elsewhere carries the owner as MOVED's details, in the wire's order", () => {
    const wire = failureToWire({
      kind: "shard_elsewhere",
      message: "shard 3 is served by node b at 10.0.0.2:7420",
      moved: { shard: 3, nodeId: "b", addr: "10.0.0.2:7420", mapVersion: 9 },
    });
    expect(wire).toEqual({
      code: "MOVED",
      message: "shard 3 is served by node b at 10.0.0.2:7420",
      details: { shard: 3, node_id: "b", addr: "10.0.0.2:7420", map_version: 9 },
    });
    expect(Object.keys(wire.details ?? {})).toEqual(["shard", "node_id", "addr", "map_version"]);
  });

  test("a retryable kind carries its hint as retry_after_ms", () => {
    expect(failureToWire({ kind: "shard_unserved", message: "m", retryAfterMs: 250 })).toEqual({
      code: "UNAVAILABLE",
      message: "m",
      details: { retry_after_ms: 250 },
    });
  });
});
