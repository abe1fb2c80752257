// Goal: the SignatureRegistry shares ids between equal requirements, counts
// references, frees and reuses ids, and keeps its feature index right; the
// Matcher's cached verdicts and eligibleAll() always agree with a direct
// satisfies() call, through signature release and id reuse and through kind
// eviction, on a seeded random corpus; the kind cache stays within its bound.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../../src/lib/assert.ts";
import { defaultLimits } from "../../../src/limits.ts";
import {
  Matcher,
  parseCapabilities,
  parseRequires,
  satisfies,
  SignatureRegistry,
  signatureRegistryFull,
  type Capabilities,
  type Requires,
} from "../../../src/engine/matching/index.ts";
import { seededRandom } from "../../support/seeded-random.ts";
import { randomCapabilities, randomRequires } from "./random-corpus.ts";

function requires(raw: unknown): Requires {
  const parsed = parseRequires(raw, defaultLimits);
  if (!parsed.ok || parsed.value === null) throw new Error(`bad requires ${JSON.stringify(raw)}`);
  return parsed.value;
}

function caps(raw: unknown): Capabilities | null {
  const parsed = parseCapabilities(raw, defaultLimits);
  if (!parsed.ok) throw new Error("bad capabilities");
  return parsed.value;
}

/** Random requirements that parse (the generator can make an empty range or a contradiction). */
function randomValidRequires(random: () => number): Requires {
  for (;;) {
    const parsed = parseRequires(randomRequires(random), defaultLimits);
    if (parsed.ok && parsed.value !== null) return parsed.value;
  }
}

describe("SignatureRegistry", () => {
  test("null is id 0 and is not counted", () => {
    const registry = new SignatureRegistry();
    expect(registry.intern(null)).toBe(0);
    registry.release(0);
    expect(registry.size).toBe(0);
    expect(registry.requiresOf(0)).toBeNull();
  });
  test("equal requirements share an id; references are counted", () => {
    const registry = new SignatureRegistry();
    const a = registry.intern(requires({ gpu: "a100", mem: { gte: 8 } }));
    const b = registry.intern(requires({ mem: { gte: 8.0 }, gpu: { in: ["a100"] } }));
    const c = registry.intern(requires({ gpu: "t4" }));
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(registry.size).toBe(2);
    expect(registry.refCountOf(a)).toBe(2);
    registry.release(a);
    expect(registry.size).toBe(2);
    expect(registry.requiresOf(a)?.key).toBe(requires({ gpu: "a100", mem: { gte: 8 } }).key);
    registry.release(a);
    expect(registry.size).toBe(1);
    expect(registry.isLive(a)).toBe(false);
    expect(() => registry.requiresOf(a)).toThrow(AssertionError);
    expect(() => registry.release(a)).toThrow(AssertionError);
    registry.checkInvariants();
  });
  test("freed ids are reused", () => {
    const registry = new SignatureRegistry();
    const a = registry.intern(requires({ x: 1 }));
    registry.intern(requires({ x: 2 }));
    registry.release(a);
    const c = registry.intern(requires({ x: 3 }));
    expect(c).toBe(a);
    expect(registry.requiresOf(c)?.key).toBe(requires({ x: 3 }).key);
    expect(registry.idCeiling).toBe(3);
    registry.checkInvariants();
  });
  test("bounded: at limit-1, limit, limit+1 distinct signatures", () => {
    const registry = new SignatureRegistry({ signaturesMax: 3 });
    expect(registry.intern(requires({ x: 1 }))).toBeGreaterThan(0);
    expect(registry.intern(requires({ x: 2 }))).toBeGreaterThan(0);
    expect(registry.intern(requires({ x: 3 }))).toBeGreaterThan(0);
    expect(registry.intern(requires({ x: 4 }))).toBe(signatureRegistryFull);
    // An existing signature still takes references when full.
    expect(registry.intern(requires({ x: 2 }))).toBeGreaterThan(0);
    expect(registry.size).toBe(3);
    registry.checkInvariants();
  });
  test("feature index files each signature under its rarest needed feature", () => {
    const registry = new SignatureRegistry();
    const a = registry.intern(requires({ os: "linux", zone: { ne: "b" } }));
    const b = registry.intern(requires({ zone: { ne: "b" }, os: { exists: false } }));
    const c = registry.intern(requires({ os: "linux", pool: 7 }));
    expect(registry.anchorFeatureOf(a)).toBe("os");
    expect(registry.anchorFeatureOf(b)).toBeNull();
    expect(registry.anchorFeatureOf(c)).toBe("pool"); // os already had a user
    expect([...(registry.signaturesAnchoredOn("os") ?? [])]).toEqual([a]);
    expect([...(registry.signaturesAnchoredOn("pool") ?? [])]).toEqual([c]);
    expect(registry.signaturesAnchoredOn("zone")).toBeUndefined();
    expect([...registry.signaturesNeedingNothing()]).toEqual([b]);
    expect(registry.featureUseOf("os")).toBe(2);
    registry.checkInvariants();
    registry.release(c);
    expect(registry.signaturesAnchoredOn("pool")).toBeUndefined();
    expect(registry.featureUseOf("os")).toBe(1);
    registry.release(b);
    expect(registry.signaturesNeedingNothing().size).toBe(0);
    registry.checkInvariants();
  });
});

describe("Matcher", () => {
  test("equal capabilities share a kind; no capabilities is its own kind", () => {
    const matcher = new Matcher(new SignatureRegistry());
    const a = matcher.workerKind(caps({ os: "linux", gpu: ["t4", "a100"] }));
    const b = matcher.workerKind(caps({ gpu: ["a100", "t4", "t4"], os: "linux" }));
    const none = matcher.workerKind(null);
    expect(a).toBe(b);
    expect(none).not.toBe(a);
    expect(matcher.workerKind(caps({}))).toBe(none);
    expect(matcher.kindCount).toBe(2);
  });
  test("signature 0 is eligible for every kind, even without capabilities", () => {
    const matcher = new Matcher(new SignatureRegistry());
    expect(matcher.isEligible(matcher.workerKind(null), 0)).toBe(true);
  });
  test("a kind without capabilities takes nothing with requirements", () => {
    const registry = new SignatureRegistry();
    const matcher = new Matcher(registry);
    const onlyAbsent = registry.intern(requires({ gpu: { exists: false } }));
    const kind = matcher.workerKind(null);
    expect(matcher.isEligible(kind, onlyAbsent)).toBe(false);
    expect(matcher.eligibleAll(kind)).toEqual([]);
    const withCaps = matcher.workerKind(caps({ os: "linux" }));
    expect(matcher.eligibleAll(withCaps)).toEqual([onlyAbsent]);
  });
  test("a released and reused id is evaluated afresh", () => {
    const registry = new SignatureRegistry();
    const matcher = new Matcher(registry);
    const kind = matcher.workerKind(caps({ gpu: "a100" }));
    const id = registry.intern(requires({ gpu: "a100" }));
    expect(matcher.isEligible(kind, id)).toBe(true);
    expect(matcher.eligibleAll(kind)).toEqual([id]);
    registry.release(id);
    expect(matcher.eligibleAll(kind)).toEqual([]);
    const reused = registry.intern(requires({ gpu: "t4" }));
    expect(reused).toBe(id);
    expect(matcher.isEligible(kind, reused)).toBe(false);
    expect(matcher.eligibleAll(kind)).toEqual([]);
    matcher.checkInvariants();
  });
  test("the kind cache is an LRU within its bound; stale kind ids are refused", () => {
    const matcher = new Matcher(new SignatureRegistry(), { workerKindsMax: 3 });
    const k0 = matcher.workerKind(caps({ n: 0 }));
    const k1 = matcher.workerKind(caps({ n: 1 }));
    matcher.workerKind(caps({ n: 2 }));
    expect(matcher.kindCount).toBe(3);
    expect(matcher.workerKind(caps({ n: 0 }))).toBe(k0); // k0 is now the most recent
    const k3 = matcher.workerKind(caps({ n: 3 })); // evicts k1
    expect(matcher.kindCount).toBe(3);
    expect(matcher.evictions).toBe(1);
    expect(matcher.workerKind(caps({ n: 0 }))).toBe(k0);
    expect(() => matcher.isEligible(k1, 1)).toThrow(AssertionError);
    const again = matcher.workerKind(caps({ n: 1 })); // a new id for the same capabilities
    expect(again).not.toBe(k1);
    expect(again).not.toBe(k3);
    expect(matcher.kindCount).toBe(3);
    for (let i = 10; i < 100; i++) matcher.workerKind(caps({ n: i }));
    expect(matcher.kindCount).toBe(3);
    matcher.checkInvariants();
  });

  for (const featureIndex of [true, false]) {
    test(`random corpus: cached verdicts and eligibleAll agree with satisfies (feature index ${featureIndex ? "on" : "off"})`, () => {
      const random = seededRandom(featureIndex ? 42 : 7);
      const registry = new SignatureRegistry({ signaturesMax: 400 });
      const matcher = new Matcher(registry, { workerKindsMax: 12, featureIndex });
      const held: number[] = [];
      const workers = Array.from({ length: 30 }, () => caps(randomCapabilities(random)));
      let checks = 0;
      let eligibleSeen = 0;
      for (let round = 0; round < 25; round++) {
        // Churn: intern new signatures (often repeats), release some, so ids get reused.
        for (let i = 0; i < 40; i++) {
          const id = registry.intern(randomValidRequires(random));
          if (id !== signatureRegistryFull) held.push(id);
        }
        for (let i = 0; i < 30 && held.length > 0; i++) {
          const at = Math.floor(random() * held.length);
          registry.release(held[at] as number);
          held[at] = held[held.length - 1] as number;
          held.pop();
        }
        const live = [...registry.liveIds()];
        for (let w = 0; w < 8; w++) {
          const worker = workers[Math.floor(random() * workers.length)] ?? null;
          const kind = matcher.workerKind(worker);
          const expected = live.filter((id) => satisfies(registry.requiresOf(id) as Requires, worker));
          if (random() < 0.5) expect(matcher.eligibleAll(kind)).toEqual(expected);
          for (const id of live) {
            expect(matcher.isEligible(kind, id)).toBe(expected.includes(id));
            checks++;
          }
          expect(matcher.eligibleAll(kind)).toEqual(expected);
          expect(matcher.eligibleSignatures(kind, [0, ...live])).toEqual([0, ...expected]);
          eligibleSeen += expected.length;
        }
        registry.checkInvariants();
        matcher.checkInvariants();
      }
      expect(checks).toBeGreaterThan(10_000);
      // The corpus must exercise both answers.
      expect(eligibleSeen).toBeGreaterThan(checks / 50);
      expect(eligibleSeen).toBeLessThan(checks / 2);
    });
  }
});
