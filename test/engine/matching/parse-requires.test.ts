// Goal: parseRequires() accepts every constraint form of the contract, rejects
// every malformed one with the right kind and where in the map it lies (a
// MapPath), enforces the count and size limits at limit-1 / limit / limit+1, and produces one
// canonical key for equivalent requirements (key order, 8 vs 8.0, set order,
// duplicates, one-value `in`).

import { describe, expect, test } from "bun:test";
import { defaultLimits, type Limits } from "../../../src/limits.ts";
import { featureNameBytesMax, type MapPath, parseRequires, stringValueBytesMax } from "../../../src/engine/matching/index.ts";

/** Where in the map a failure lies, written out (not the source's own helper). */
function at(feature: string | null, operator: string | null = null, position: number | null = null): MapPath {
  return { feature, operator, position };
}
const wholeMap = at(null);

function failure(raw: unknown, limits: Limits = defaultLimits): { kind: string; at: MapPath } {
  const parsed = parseRequires(raw, limits);
  if (parsed.ok) throw new Error(`expected a failure for ${JSON.stringify(raw)}`);
  return { kind: parsed.kind, at: parsed.at };
}

function key(raw: unknown): string | null {
  const parsed = parseRequires(raw, defaultLimits);
  if (!parsed.ok) throw new Error(`${JSON.stringify(parsed.at)}: ${parsed.message}`);
  return parsed.value === null ? null : parsed.value.key;
}

describe("accepted forms", () => {
  test("absent, nil, {} and all-nil maps mean no requirements", () => {
    expect(key(undefined)).toBeNull();
    expect(key(null)).toBeNull();
    expect(key({})).toBeNull();
    expect(key({ gpu: null })).toBeNull();
  });
  test("every operator parses", () => {
    const parsed = parseRequires(
      {
        a: "x",
        b: 8,
        c: true,
        d: { in: ["x", "y"] },
        e: { all: [1, 2] },
        f: { gte: 1, lt: 2.5 },
        g: { gt: -1, lte: 0 },
        h: { ne: "z" },
        i: { exists: true },
        j: { exists: false },
        k: { ne: 3, exists: false },
      },
      defaultLimits,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.value === null) return;
    expect(parsed.value.constraints.map((c) => c.feature)).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]);
    const byFeature = new Map(parsed.value.constraints.map((c) => [c.feature, c]));
    expect(byFeature.get("a")?.allOf).toEqual(["x"]);
    expect(byFeature.get("d")?.anyOf).toEqual(["x", "y"]);
    expect(byFeature.get("f")?.range).toEqual({ min: 1, minInclusive: true, max: 2.5, maxInclusive: false });
    expect(byFeature.get("h")?.needsFeature).toBe(false);
    expect(byFeature.get("j")?.needsFeature).toBe(false);
    expect(byFeature.get("i")?.needsFeature).toBe(true);
  });
  test("nil operators are absent", () => {
    expect(key({ mem: { gte: 8, lt: null } })).toBe(key({ mem: { gte: 8 } }));
  });
});

describe("errors say where in the map they lie", () => {
  const cases: Array<[string, unknown, string, MapPath]> = [
    ["requires not a map", ["gpu"], "invalid_value", wholeMap],
    ["requires a string", "gpu", "invalid_value", wholeMap],
    ["unknown operator", { gpu: { foo: 1 } }, "invalid_value", at("gpu", "foo")],
    ["eq is not an operator", { gpu: { eq: 1 } }, "invalid_value", at("gpu", "eq")],
    ["bare array", { gpu: ["a", "b"] }, "invalid_value", at("gpu")],
    ["binary value", { gpu: new Uint8Array(2) }, "invalid_value", at("gpu")],
    ["NaN scalar", { gpu: Number.NaN }, "invalid_value", at("gpu")],
    ["Infinity scalar", { gpu: Number.POSITIVE_INFINITY }, "invalid_value", at("gpu")],
    ["empty operator map", { gpu: {} }, "invalid_value", at("gpu")],
    ["only nil operators", { gpu: { in: null } }, "invalid_value", at("gpu")],
    ["in not an array", { gpu: { in: "a" } }, "invalid_value", at("gpu", "in")],
    ["in empty", { gpu: { in: [] } }, "invalid_value", at("gpu", "in")],
    ["all empty", { gpu: { all: [] } }, "invalid_value", at("gpu", "all")],
    ["in with a map", { gpu: { in: ["a", { x: 1 }] } }, "invalid_value", at("gpu", "in", 1)],
    ["in with nil", { gpu: { in: ["a", null] } }, "invalid_value", at("gpu", "in", 1)],
    ["all with an array", { gpu: { all: [["a"]] } }, "invalid_value", at("gpu", "all", 0)],
    ["in with NaN", { gpu: { in: [1, Number.NaN] } }, "invalid_value", at("gpu", "in", 1)],
    ["range bound a string", { mem: { gte: "8" } }, "invalid_value", at("mem", "gte")],
    ["range bound a boolean", { mem: { lt: true } }, "invalid_value", at("mem", "lt")],
    ["range bound Infinity", { mem: { lte: Number.POSITIVE_INFINITY } }, "invalid_value", at("mem", "lte")],
    ["ne a map", { mem: { ne: {} } }, "invalid_value", at("mem", "ne")],
    ["exists a number", { mem: { exists: 1 } }, "invalid_value", at("mem", "exists")],
    ["empty range", { mem: { gte: 10, lt: 5 } }, "invalid_value", at("mem")],
    ["point range open", { mem: { gt: 5, lte: 5 } }, "invalid_value", at("mem")],
    ["exists false with in", { mem: { exists: false, in: [1, 2] } }, "invalid_value", at("mem")],
    ["exists false with range", { mem: { exists: false, gte: 1 } }, "invalid_value", at("mem")],
    ["empty feature name", { "": 1 }, "invalid_value", at("")],
  ];
  for (const [name, raw, kind, where] of cases) {
    test(name, () => {
      expect(failure(raw)).toEqual({ kind, at: where });
    });
  }
  test("the point range [5, 5] is accepted", () => {
    expect(key({ mem: { gte: 5, lte: 5 } })).not.toBeNull();
  });
});

describe("limits", () => {
  const limits: Limits = { ...defaultLimits, featuresMax: 4, valuesPerFeatureMax: 3 };
  function features(count: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) map[`f${i}`] = i;
    return map;
  }
  test("features at limit-1, limit, limit+1", () => {
    expect(parseRequires(features(3), limits).ok).toBe(true);
    expect(parseRequires(features(4), limits).ok).toBe(true);
    expect(failure(features(5), limits)).toEqual({ kind: "over_limit", at: wholeMap });
  });
  test("nil features do not count", () => {
    expect(parseRequires({ ...features(4), extra: null }, limits).ok).toBe(true);
  });
  test("in/all values at limit-1, limit, limit+1", () => {
    for (const op of ["in", "all"]) {
      expect(parseRequires({ v: { [op]: [1, 2] } }, limits).ok).toBe(true);
      expect(parseRequires({ v: { [op]: [1, 2, 3] } }, limits).ok).toBe(true);
      expect(failure({ v: { [op]: [1, 2, 3, 4] } }, limits)).toEqual({ kind: "over_limit", at: at("v", op) });
    }
  });
  test("feature name bytes at limit-1, limit, limit+1 (multi-byte characters count as bytes)", () => {
    expect(parseRequires({ ["a".repeat(featureNameBytesMax - 1)]: 1 }, defaultLimits).ok).toBe(true);
    expect(parseRequires({ ["a".repeat(featureNameBytesMax)]: 1 }, defaultLimits).ok).toBe(true);
    const long = "a".repeat(featureNameBytesMax + 1);
    expect(failure({ [long]: 1 })).toEqual({ kind: "over_limit", at: at(long) });
    const euro = "€".repeat(85); // 255 bytes
    expect(parseRequires({ [euro]: 1 }, defaultLimits).ok).toBe(true);
    expect(failure({ [`${euro}a`]: 1 }).kind).toBe("over_limit");
  });
  test("string values at limit, limit+1", () => {
    expect(parseRequires({ v: "x".repeat(stringValueBytesMax) }, defaultLimits).ok).toBe(true);
    expect(failure({ v: "x".repeat(stringValueBytesMax + 1) })).toEqual({ kind: "over_limit", at: at("v") });
    expect(failure({ v: { in: ["a", "x".repeat(stringValueBytesMax + 1)] } })).toEqual({
      kind: "over_limit",
      at: at("v", "in", 1),
    });
    expect(failure({ v: { ne: "x".repeat(stringValueBytesMax + 1) } })).toEqual({ kind: "over_limit", at: at("v", "ne") });
  });
});

describe("canonical keys", () => {
  test("feature and operator order do not matter", () => {
    expect(key({ a: 1, b: { gte: 2, lt: 9 } })).toBe(key({ b: { lt: 9, gte: 2 }, a: 1 }));
  });
  test("8 and 8.0, -0 and 0 are one value", () => {
    expect(key({ a: 8 })).toBe(key({ a: 8.0 }));
    expect(key({ a: { gte: -0 } })).toBe(key({ a: { gte: 0 } }));
    expect(key({ a: { ne: -0 } })).toBe(key({ a: { ne: 0 } }));
  });
  test("sets are sorted and deduplicated", () => {
    expect(key({ a: { in: ["y", "x", "y"] } })).toBe(key({ a: { in: ["x", "y"] } }));
    expect(key({ a: { all: [3, 1, 2, 1.0] } })).toBe(key({ a: { all: [1, 2, 3] } }));
  });
  test("a scalar, a one-value in and a one-value all share a key", () => {
    expect(key({ a: "x" })).toBe(key({ a: { in: ["x"] } }));
    expect(key({ a: "x" })).toBe(key({ a: { all: ["x"] } }));
    expect(key({ a: { in: ["x", "x"] } })).toBe(key({ a: "x" }));
  });
  test("types stay apart", () => {
    const keys = [key({ a: 1 }), key({ a: "1" }), key({ a: true }), key({ a: { in: [1, "1"] } }), key({ a: { in: [1, true] } })];
    expect(new Set(keys).size).toBe(keys.length);
  });
  test("different constraints get different keys", () => {
    const keys = [
      key({ a: { gte: 1 } }),
      key({ a: { gt: 1 } }),
      key({ a: { lte: 1 } }),
      key({ a: { lt: 1 } }),
      key({ a: { ne: 1 } }),
      key({ a: { exists: true } }),
      key({ a: { exists: false } }),
      key({ a: { all: [1, 2] } }),
      key({ a: { in: [1, 2] } }),
      key({ b: { in: [1, 2] } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
  test("redundant bounds keep the stricter one", () => {
    expect(key({ a: { gte: 5, gt: 5 } })).toBe(key({ a: { gt: 5 } }));
    expect(key({ a: { gte: 6, gt: 5 } })).toBe(key({ a: { gte: 6 } }));
    expect(key({ a: { lte: 5, lt: 5 } })).toBe(key({ a: { lt: 5 } }));
  });
});
