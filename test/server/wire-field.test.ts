// Goal: every kind of engine failure location renders as the wire's field
// path and batch index the contract names (server/wire-field.ts), and
// error-mapping.ts puts them in `details` — for engine failures (a location)
// and for the server's own decoding failures (a wire path already) alike.

import { describe, expect, test } from "bun:test";
import type { Failure, FailureLocation, MapPath } from "../../src/engine/api.ts";
import { failureToWire } from "../../src/server/error-mapping.ts";
import { wireField, wireIndex } from "../../src/server/wire-field.ts";

function at(feature: string | null, operator: string | null = null, position: number | null = null): MapPath {
  return { feature, operator, position };
}

function item(index: number, part: Extract<FailureLocation, { kind: "item" }>["part"]): FailureLocation {
  return { kind: "item", index, part };
}

describe("wireField and wireIndex", () => {
  const cases: Array<[string, FailureLocation, string, number | undefined]> = [
    ["the namespace", { kind: "namespace" }, "ns", undefined],
    ["the batch", { kind: "batch" }, "items", undefined],
    ["a pause's topic", { kind: "topic" }, "topic", undefined],
    ["a dequeue's wait", { kind: "wait" }, "wait_ms", undefined],
    ["the capabilities map", { kind: "capabilities", at: at(null) }, "capabilities", undefined],
    ["a capability", { kind: "capabilities", at: at("gpu") }, "capabilities.gpu", undefined],
    ["a capability's value", { kind: "capabilities", at: at("gpu", null, 1) }, "capabilities.gpu[1]", undefined],
    ["an empty capability name", { kind: "capabilities", at: at("") }, "capabilities.", undefined],
    ["an item's topic", item(3, { of: "topic" }), "items[3].topic", 3],
    ["an item's after list", item(0, { of: "after", position: null }), "items[0].after", 0],
    ["an id in an item's after list", item(1, { of: "after", position: 4 }), "items[1].after[4]", 1],
    ["an item's requires map", item(2, { of: "requires", at: at(null) }), "items[2].requires", 2],
    ["a required feature", item(2, { of: "requires", at: at("mem") }), "items[2].requires.mem", 2],
    ["a feature's operator", item(2, { of: "requires", at: at("mem", "gte") }), "items[2].requires.mem.gte", 2],
    ["a value in an operator's list", item(7, { of: "requires", at: at("gpu", "in", 2) }), "items[7].requires.gpu.in[2]", 7],
  ];
  for (const [name, location, field, index] of cases) {
    test(`${name}: ${field}`, () => {
      expect(wireField(location)).toBe(field);
      expect(wireIndex(location)).toBe(index);
    });
  }
});

describe("failureToWire", () => {
  test("an engine failure's location becomes details.field and details.index, before retry_after_ms", () => {
    const failure: Failure = { kind: "server_full", message: "full", at: item(5, { of: "requires", at: at(null) }), retryAfterMs: 1000 };
    const wire = failureToWire(failure);
    expect(wire).toEqual({ code: "UNAVAILABLE", message: "full", details: { field: "items[5].requires", index: 5, retry_after_ms: 1000 } });
    // Key order is the wire's byte order.
    expect(Object.keys(wire.details ?? {})).toEqual(["field", "index", "retry_after_ms"]);
  });

  test("a location outside a batch item has a field and no index", () => {
    expect(failureToWire({ kind: "over_limit", message: "m", at: { kind: "wait" } })).toEqual({ code: "TOO_LARGE", message: "m", details: { field: "wait_ms" } });
  });

  test("a failure without a location has no field; without any detail, no details", () => {
    expect(failureToWire({ kind: "rate_limited", message: "m", retryAfterMs: 5 })).toEqual({ code: "RATE_LIMITED", message: "m", details: { retry_after_ms: 5 } });
    expect(failureToWire({ kind: "unknown_dependency", message: "m" })).toEqual({ code: "NOT_FOUND", message: "m" });
  });

  test("a decoding failure keeps its wire path and index", () => {
    expect(failureToWire({ code: "BAD_REQUEST", message: "m", field: "items[2].priority", index: 2 })).toEqual({
      code: "BAD_REQUEST",
      message: "m",
      details: { field: "items[2].priority", index: 2 },
    });
    expect(failureToWire({ code: "BAD_REQUEST", message: "m", field: "protocol" })).toEqual({ code: "BAD_REQUEST", message: "m", details: { field: "protocol" } });
  });
});
