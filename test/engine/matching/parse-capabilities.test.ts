// Goal: parseCapabilities() turns a worker's capability map into sorted sets
// with one canonical key per distinct set, rejects malformed values saying
// where in the map they lie (a MapPath), and enforces its limits at limit-1 /
// limit / limit+1.

import { describe, expect, test } from "bun:test";
import { defaultLimits, type Limits } from "../../../src/limits.ts";
import { CapabilitiesParser, type MapPath, parseCapabilities } from "../../../src/engine/matching/index.ts";

/** Where in the map a failure lies, written out (not the source's own helper). */
function at(feature: string | null, operator: string | null = null, position: number | null = null): MapPath {
  return { feature, operator, position };
}
const wholeMap = at(null);

function key(raw: unknown): string | null {
  const parsed = parseCapabilities(raw, defaultLimits);
  if (!parsed.ok) throw new Error(`${JSON.stringify(parsed.at)}: ${parsed.message}`);
  return parsed.value === null ? null : parsed.value.key;
}

function failure(raw: unknown, limits: Limits = defaultLimits): { kind: string; at: MapPath } {
  const parsed = parseCapabilities(raw, limits);
  if (parsed.ok) throw new Error("expected a failure");
  return { kind: parsed.kind, at: parsed.at };
}

describe("parseCapabilities", () => {
  test("absent, nil, {} and all-nil give null", () => {
    for (const raw of [undefined, null, {}, { a: null }]) expect(key(raw)).toBeNull();
  });
  test("scalars become sets of one; sets are sorted and deduplicated", () => {
    const parsed = parseCapabilities({ os: "linux", gpu: ["t4", "a100", "t4"], mem: 8.0, empty: [] }, defaultLimits);
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
  test("errors say where in the map they lie", () => {
    expect(failure(["a"])).toEqual({ kind: "invalid_value", at: wholeMap });
    expect(failure({ gpu: { model: "a100" } })).toEqual({ kind: "invalid_value", at: at("gpu") });
    expect(failure({ gpu: ["a", ["b"]] })).toEqual({ kind: "invalid_value", at: at("gpu", null, 1) });
    expect(failure({ gpu: ["a", null] })).toEqual({ kind: "invalid_value", at: at("gpu", null, 1) });
    expect(failure({ mem: Number.NaN })).toEqual({ kind: "invalid_value", at: at("mem") });
    expect(failure({ "": 1 })).toEqual({ kind: "invalid_value", at: at("") });
    expect(failure({ v: "x".repeat(256) })).toEqual({ kind: "over_limit", at: at("v") });
    expect(failure({ ["k".repeat(256)]: 1 }).kind).toBe("over_limit");
  });
  test("limits at limit-1, limit, limit+1", () => {
    const limits: Limits = { ...defaultLimits, featuresMax: 3, valuesPerFeatureMax: 2 };
    expect(parseCapabilities({ a: 1, b: 1 }, limits).ok).toBe(true);
    expect(parseCapabilities({ a: 1, b: 1, c: 1 }, limits).ok).toBe(true);
    expect(failure({ a: 1, b: 1, c: 1, d: 1 }, limits)).toEqual({ kind: "over_limit", at: wholeMap });
    expect(parseCapabilities({ a: [1] }, limits).ok).toBe(true);
    expect(parseCapabilities({ a: [1, 2] }, limits).ok).toBe(true);
    expect(failure({ a: [1, 2, 3] }, limits)).toEqual({ kind: "over_limit", at: at("a") });
  });
});

describe("CapabilitiesParser", () => {
  test("a frozen map is parsed once: the same result comes back, equal to a fresh parse", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw = Object.freeze({ pool: "p1", gpu: Object.freeze(["t4", "a100"]) });
    const first = parser.parse(raw);
    expect(parser.parse(raw)).toBe(first);
    const fresh = parseCapabilities(raw, defaultLimits);
    expect(first.ok && fresh.ok && first.value?.key === fresh.value?.key).toBe(true);
  });

  test("a map that is not frozen is parsed every time (it may have changed)", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw: Record<string, unknown> = { pool: "p1" };
    const first = parser.parse(raw);
    raw.pool = "p2";
    const second = parser.parse(raw);
    expect(second).not.toBe(first);
    expect(second.ok && second.value?.key).toBe(key({ pool: "p2" }) as string);
  });

  test("a failure is not kept: the same frozen bad map fails each time, saying where", () => {
    const parser = new CapabilitiesParser(defaultLimits);
    const raw = Object.freeze({ pool: Number.NaN });
    for (let i = 0; i < 2; i++) {
      const result = parser.parse(raw);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.at).toEqual(at("pool"));
    }
  });
});
