// Goal: parseCapabilities() turns a worker's capability map into sorted sets
// with one canonical key per distinct set, rejects malformed values with the
// exact field path, and enforces its limits at limit-1 / limit / limit+1.

import { describe, expect, test } from "bun:test";
import { defaultLimits, type Limits } from "../../../src/limits.ts";
import { CapabilitiesParser, parseCapabilities } from "../../../src/engine/matching/index.ts";

const path = "capabilities";

function key(raw: unknown): string | null {
  const parsed = parseCapabilities(raw, path, defaultLimits);
  if (!parsed.ok) throw new Error(`${parsed.field}: ${parsed.message}`);
  return parsed.value === null ? null : parsed.value.key;
}

function failure(raw: unknown, limits: Limits = defaultLimits): { code: string; field: string } {
  const parsed = parseCapabilities(raw, path, limits);
  if (parsed.ok) throw new Error("expected a failure");
  return { code: parsed.code, field: parsed.field };
}

describe("parseCapabilities", () => {
  test("absent, nil, {} and all-nil give null", () => {
    for (const raw of [undefined, null, {}, { a: null }]) expect(key(raw)).toBeNull();
  });
  test("scalars become sets of one; sets are sorted and deduplicated", () => {
    const parsed = parseCapabilities({ os: "linux", gpu: ["t4", "a100", "t4"], mem: 8.0, empty: [] }, path, defaultLimits);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.value === null) return;
    expect(parsed.value.features.get("os")).toEqual(["linux"]);
    expect(parsed.value.features.get("gpu")).toEqual(["a100", "t4"]);
    expect(parsed.value.features.get("mem")).toEqual([8]);
    expect(parsed.value.features.get("empty")).toEqual([]);
  });
  test("equal capability sets share a key whatever the order or form", () => {
    expect(key({ a: 1, b: ["y", "x"] })).toBe(key({ b: ["x", "y", "x"], a: [1.0] }));
    expect(key({ a: -0 })).toBe(key({ a: 0 }));
    expect(key({ a: 1, b: null })).toBe(key({ a: 1 }));
  });
  test("different sets get different keys", () => {
    const keys = [key({ a: 1 }), key({ a: "1" }), key({ a: true }), key({ a: [] }), key({ b: 1 }), key({ a: [1, 2] })];
    expect(new Set(keys).size).toBe(keys.length);
  });
  test("errors name the exact field", () => {
    expect(failure(["a"])).toEqual({ code: "BAD_REQUEST", field: path });
    expect(failure({ gpu: { model: "a100" } })).toEqual({ code: "BAD_REQUEST", field: `${path}.gpu` });
    expect(failure({ gpu: ["a", ["b"]] })).toEqual({ code: "BAD_REQUEST", field: `${path}.gpu[1]` });
    expect(failure({ gpu: ["a", null] })).toEqual({ code: "BAD_REQUEST", field: `${path}.gpu[1]` });
    expect(failure({ mem: Number.NaN })).toEqual({ code: "BAD_REQUEST", field: `${path}.mem` });
    expect(failure({ "": 1 })).toEqual({ code: "BAD_REQUEST", field: `${path}.` });
    expect(failure({ v: "x".repeat(256) })).toEqual({ code: "TOO_LARGE", field: `${path}.v` });
    expect(failure({ ["k".repeat(256)]: 1 }).code).toBe("TOO_LARGE");
  });
  test("limits at limit-1, limit, limit+1", () => {
    const limits: Limits = { ...defaultLimits, featuresMax: 3, valuesPerFeatureMax: 2 };
    expect(parseCapabilities({ a: 1, b: 1 }, path, limits).ok).toBe(true);
    expect(parseCapabilities({ a: 1, b: 1, c: 1 }, path, limits).ok).toBe(true);
    expect(failure({ a: 1, b: 1, c: 1, d: 1 }, limits)).toEqual({ code: "TOO_LARGE", field: path });
    expect(parseCapabilities({ a: [1] }, path, limits).ok).toBe(true);
    expect(parseCapabilities({ a: [1, 2] }, path, limits).ok).toBe(true);
    expect(failure({ a: [1, 2, 3] }, limits)).toEqual({ code: "TOO_LARGE", field: `${path}.a` });
  });
});

describe("CapabilitiesParser", () => {
  test("a frozen map is parsed once: the same result comes back, equal to a fresh parse", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw = Object.freeze({ pool: "p1", gpu: Object.freeze(["t4", "a100"]) });
    const first = parser.parse(raw, path);
    expect(parser.parse(raw, path)).toBe(first);
    const fresh = parseCapabilities(raw, path, defaultLimits);
    expect(first.ok && fresh.ok && first.value?.key === fresh.value?.key).toBe(true);
  });

  test("a map that is not frozen is parsed every time (it may have changed)", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw: Record<string, unknown> = { pool: "p1" };
    const first = parser.parse(raw, path);
    raw.pool = "p2";
    const second = parser.parse(raw, path);
    expect(second).not.toBe(first);
    expect(second.ok && second.value?.key).toBe(key({ pool: "p2" }) as string);
  });

  test("a failure is not kept: the same frozen bad map fails each time with its field", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw = Object.freeze({ pool: Number.NaN });
    for (let i = 0; i < 2; i++) {
      const result = parser.parse(raw, path);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.field).toBe("capabilities.pool");
    }
  });
});
