// Goal: satisfies() follows the contract's matching table to the letter: every
// constraint form against scalars and sets, numbers by value, types never
// mixing, missing features, multi-key objects, ranges on sets, and the rule
// that a worker without capabilities takes only items without requirements.

import { describe, expect, test } from "bun:test";
import { defaultLimits } from "../../../src/limits.ts";
import { parseCapabilities, parseRequires, satisfies, type Capabilities, type Requires } from "../../../src/engine/matching/index.ts";

function requires(raw: unknown): Requires {
  const parsed = parseRequires(raw, defaultLimits);
  if (!parsed.ok) throw new Error(`${JSON.stringify(parsed.at)}: ${parsed.message}`);
  if (parsed.value === null) throw new Error("no requirements");
  return parsed.value;
}

function caps(raw: unknown): Capabilities | null {
  const parsed = parseCapabilities(raw, defaultLimits);
  if (!parsed.ok) throw new Error(`${JSON.stringify(parsed.at)}: ${parsed.message}`);
  return parsed.value;
}

function holds(requiresRaw: unknown, capsRaw: unknown): boolean {
  return satisfies(requires(requiresRaw), caps(capsRaw));
}

describe("scalar constraint", () => {
  test("equals a scalar feature", () => {
    expect(holds({ os: "linux" }, { os: "linux" })).toBe(true);
    expect(holds({ os: "linux" }, { os: "darwin" })).toBe(false);
  });
  test("is contained in a set feature", () => {
    expect(holds({ gpu: "a100" }, { gpu: ["h100", "a100"] })).toBe(true);
    expect(holds({ gpu: "a100" }, { gpu: ["h100", "t4"] })).toBe(false);
    expect(holds({ gpu: "a100" }, { gpu: [] })).toBe(false);
  });
  test("numbers compare by value, 8 == 8.0, -0 == 0", () => {
    expect(holds({ cores: 8 }, { cores: 8.0 })).toBe(true);
    expect(holds({ cores: 8.5 }, { cores: 8 })).toBe(false);
    expect(holds({ offset: -0 }, { offset: 0 })).toBe(true);
    expect(holds({ offset: 0 }, { offset: [-0] })).toBe(true);
  });
  test("strings never equal numbers, booleans are not numbers", () => {
    expect(holds({ cores: 8 }, { cores: "8" })).toBe(false);
    expect(holds({ cores: "8" }, { cores: 8 })).toBe(false);
    expect(holds({ fast: true }, { fast: 1 })).toBe(false);
    expect(holds({ fast: 1 }, { fast: true })).toBe(false);
    expect(holds({ fast: false }, { fast: 0 })).toBe(false);
    expect(holds({ fast: true }, { fast: true })).toBe(true);
    expect(holds({ fast: false }, { fast: [true, false] })).toBe(true);
  });
  test("missing feature fails", () => {
    expect(holds({ os: "linux" }, { arch: "x86" })).toBe(false);
  });
  test("every feature must hold", () => {
    expect(holds({ os: "linux", arch: "arm" }, { os: "linux", arch: "x86" })).toBe(false);
    expect(holds({ os: "linux", arch: "arm" }, { os: "linux", arch: ["x86", "arm"] })).toBe(true);
  });
});

describe("in", () => {
  test("scalar feature is one of them", () => {
    expect(holds({ region: { in: ["eu", "us"] } }, { region: "us" })).toBe(true);
    expect(holds({ region: { in: ["eu", "us"] } }, { region: "ap" })).toBe(false);
  });
  test("set feature shares one", () => {
    expect(holds({ region: { in: ["eu", "us"] } }, { region: ["ap", "eu"] })).toBe(true);
    expect(holds({ region: { in: ["eu", "us"] } }, { region: ["ap", "sa"] })).toBe(false);
  });
  test("one-value in behaves like the scalar", () => {
    expect(holds({ region: { in: ["eu"] } }, { region: ["eu", "us"] })).toBe(true);
    expect(holds({ region: { in: ["eu"] } }, { region: "us" })).toBe(false);
  });
  test("mixed types compare strictly", () => {
    expect(holds({ v: { in: [1, "2", true] } }, { v: 2 })).toBe(false);
    expect(holds({ v: { in: [1, "2", true] } }, { v: "2" })).toBe(true);
    expect(holds({ v: { in: [1, "2", true] } }, { v: 1.0 })).toBe(true);
    expect(holds({ v: { in: [1, "2", false] } }, { v: 0 })).toBe(false);
  });
  test("missing feature fails", () => {
    expect(holds({ region: { in: ["eu", "us"] } }, { os: "linux" })).toBe(false);
  });
  test("large sets on both sides (binary search path)", () => {
    const many = Array.from({ length: 200 }, (_, i) => `v${i}`);
    expect(holds({ tag: { in: many } }, { tag: ["zzz", "v199"] })).toBe(true);
    expect(holds({ tag: { in: ["v150", "nope"] } }, { tag: many })).toBe(true);
    expect(holds({ tag: { in: ["x", "nope"] } }, { tag: many })).toBe(false);
  });
});

describe("all", () => {
  test("set contains all of them", () => {
    expect(holds({ tags: { all: ["a", "b"] } }, { tags: ["a", "b", "c"] })).toBe(true);
    expect(holds({ tags: { all: ["a", "b"] } }, { tags: ["a", "c"] })).toBe(false);
  });
  test("a scalar contains all only when every value equals it", () => {
    expect(holds({ tags: { all: ["a"] } }, { tags: "a" })).toBe(true);
    expect(holds({ tags: { all: ["a", "a"] } }, { tags: "a" })).toBe(true);
    expect(holds({ tags: { all: ["a", "b"] } }, { tags: "a" })).toBe(false);
    expect(holds({ n: { all: [8, 8.0] } }, { n: 8 })).toBe(true);
  });
  test("missing feature fails", () => {
    expect(holds({ tags: { all: ["a"] } }, { other: "a" })).toBe(false);
  });
});

describe("ranges", () => {
  test("each bound, at, below and above", () => {
    expect(holds({ mem: { gte: 16 } }, { mem: 16 })).toBe(true);
    expect(holds({ mem: { gte: 16 } }, { mem: 15.9 })).toBe(false);
    expect(holds({ mem: { gt: 16 } }, { mem: 16 })).toBe(false);
    expect(holds({ mem: { gt: 16 } }, { mem: 16.1 })).toBe(true);
    expect(holds({ mem: { lte: 16 } }, { mem: 16 })).toBe(true);
    expect(holds({ mem: { lte: 16 } }, { mem: 17 })).toBe(false);
    expect(holds({ mem: { lt: 16 } }, { mem: 16 })).toBe(false);
    expect(holds({ mem: { lt: 16 } }, { mem: -1 })).toBe(true);
  });
  test("non-numbers are never in range", () => {
    expect(holds({ mem: { gte: 0 } }, { mem: "32" })).toBe(false);
    expect(holds({ mem: { gte: 0 } }, { mem: true })).toBe(false);
    expect(holds({ mem: { lte: 1 } }, { mem: false })).toBe(false);
  });
  test("a set holds if any element is in range", () => {
    expect(holds({ mem: { gte: 16 } }, { mem: [4, 8, 32] })).toBe(true);
    expect(holds({ mem: { gte: 16 } }, { mem: [4, 8, "64"] })).toBe(false);
  });
  test("several bounds in one object: one element must satisfy them all", () => {
    // 4 is below 10 and 20 is above 5, but no single element is in [5, 10].
    expect(holds({ v: { gte: 5, lte: 10 } }, { v: [4, 20] })).toBe(false);
    expect(holds({ v: { gte: 5, lte: 10 } }, { v: [4, 7, 20] })).toBe(true);
    expect(holds({ v: { gt: 5, lt: 10 } }, { v: [5, 10] })).toBe(false);
    expect(holds({ v: { gte: 5, gt: 5 } }, { v: 5 })).toBe(false);
    expect(holds({ v: { lte: 5, lt: 6 } }, { v: 5.5 })).toBe(false);
  });
  test("missing feature fails", () => {
    expect(holds({ mem: { gte: 0 } }, { cpu: 1 })).toBe(false);
  });
});

describe("ne", () => {
  test("absent feature holds", () => {
    expect(holds({ zone: { ne: "b" } }, { os: "linux" })).toBe(true);
  });
  test("scalar not equal / set not containing", () => {
    expect(holds({ zone: { ne: "b" } }, { zone: "a" })).toBe(true);
    expect(holds({ zone: { ne: "b" } }, { zone: "b" })).toBe(false);
    expect(holds({ zone: { ne: "b" } }, { zone: ["a", "b"] })).toBe(false);
    expect(holds({ zone: { ne: "b" } }, { zone: ["a", "c"] })).toBe(true);
    expect(holds({ n: { ne: 8 } }, { n: 8.0 })).toBe(false);
    expect(holds({ n: { ne: 8 } }, { n: "8" })).toBe(true);
  });
});

describe("exists", () => {
  test("true: present, whatever the value (an empty set is present)", () => {
    expect(holds({ gpu: { exists: true } }, { gpu: false })).toBe(true);
    expect(holds({ gpu: { exists: true } }, { gpu: [] })).toBe(true);
    expect(holds({ gpu: { exists: true } }, { os: "linux" })).toBe(false);
  });
  test("false: absent", () => {
    expect(holds({ gpu: { exists: false } }, { os: "linux" })).toBe(true);
    expect(holds({ gpu: { exists: false } }, { gpu: [] })).toBe(false);
    expect(holds({ gpu: { exists: false } }, { gpu: "a100", os: "linux" })).toBe(false);
  });
  test("a nil capability counts as absent", () => {
    expect(holds({ gpu: { exists: false } }, { gpu: null, os: "linux" })).toBe(true);
  });
});

describe("several operators in one object", () => {
  test("all must hold", () => {
    const r = { mem: { gte: 8, ne: 12, in: [8, 12, 16, 64] } };
    expect(holds(r, { mem: 8 })).toBe(true);
    expect(holds(r, { mem: 12 })).toBe(false);
    expect(holds(r, { mem: 64 })).toBe(true);
    expect(holds(r, { mem: 4 })).toBe(false);
    expect(holds(r, { mem: 32 })).toBe(false);
  });
  test("ne with exists: true fails when absent", () => {
    expect(holds({ zone: { ne: "b", exists: true } }, { os: "x" })).toBe(false);
    expect(holds({ zone: { ne: "b", exists: true } }, { zone: "a" })).toBe(true);
  });
  test("all with in", () => {
    const r = { tags: { all: ["a"], in: ["x", "y"] } };
    expect(holds(r, { tags: ["a", "y"] })).toBe(true);
    expect(holds(r, { tags: ["a"] })).toBe(false);
  });
});

describe("workers without capabilities", () => {
  test("no capabilities or {} match only items without requires", () => {
    for (const none of [null, undefined, {}, { gpu: null }]) {
      expect(caps(none)).toBeNull();
      expect(satisfies(requires({ gpu: { exists: false } }), caps(none))).toBe(false);
      expect(satisfies(requires({ zone: { ne: "b" } }), caps(none))).toBe(false);
      expect(satisfies(requires({ os: "linux" }), caps(none))).toBe(false);
    }
  });
  test("an empty requirement list is satisfied by anyone", () => {
    expect(satisfies({ constraints: [] }, null)).toBe(true);
    expect(satisfies({ constraints: [] }, caps({ os: "linux" }))).toBe(true);
  });
});
