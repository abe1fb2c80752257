// Goal: the policy record (record kind 5, from record version 4) round-trips
// through the codec exactly with every combination of its optional fields;
// records that break its invariants (an empty name, a weight on the topic's
// own policy, a bound below 1 or not whole) are refused before encode and
// damaged values after decode; its bytes are pinned by a hex fixture (a
// layout change must bump RECORD_VERSION); record versions 1 to 3, written
// before policies existed, refuse a policy value; and policy keys never
// collide, the topic's own included.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { PolicyRecord } from "../../src/storage/record.ts";
import { RecordDecodeError, RecordKind, decodePauseRecord, decodePolicyRecord, encodePolicyRecord } from "../../src/storage/record-codec.ts";
import { policyKey } from "../../src/storage/store.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function policy(overrides: Partial<PolicyRecord> = {}): PolicyRecord {
  return { ns: "n", topic: "t", group: null, weight: null, maxLeased: null, rate: null, ...overrides };
}

describe("policy record", () => {
  test("round-trips: the topic's own, a group's, the default, every optional field alone and together", () => {
    const cases: PolicyRecord[] = [
      policy(),
      policy({ maxLeased: 10 }),
      policy({ rate: { count: 100, perMs: 1_000 } }),
      policy({ maxLeased: 1, rate: { count: 1, perMs: 1 } }),
      policy({ group: "acme", weight: 3 }),
      policy({ group: "*", weight: 1, maxLeased: 2 ** 40, rate: { count: 2 ** 32, perMs: 86_400_000 } }),
      policy({ group: "ü".repeat(127), weight: 10_000, maxLeased: 7 }),
      policy({ ns: "é".repeat(127), topic: "\u{1F600}".repeat(63), group: "g", weight: 0.5 }),
    ];
    for (const record of cases) {
      const bytes = encodePolicyRecord(record);
      expect(bytes[0]).toBe(RECORD_VERSION);
      expect(bytes[1]).toBe(RecordKind.policy);
      expect(decodePolicyRecord(bytes)).toEqual(record);
    }
  });

  test("the version 4 layout (version 5 labels it alike), pinned: version, kind, flags, f64 weight, maxLeased, rate count and perMs, ns, topic, [group]", () => {
    // 04 05 | 00 | four f64 zeros | u32 1 "n" | u32 1 "t"
    const zeros = "0000000000000000".repeat(4);
    expect(hex(encodePolicyRecord(policy()))).toBe("050500" + zeros + "000000016e" + "0000000174");
    // 04 05 | 0f | f64 2 | f64 5 | f64 10 | f64 1000 | "n" | "t" | u32 1 "g"
    expect(hex(encodePolicyRecord(policy({ group: "g", weight: 2, maxLeased: 5, rate: { count: 10, perMs: 1_000 } })))).toBe(
      "05050f" + "4000000000000000" + "4014000000000000" + "4024000000000000" + "408f400000000000" + "000000016e" + "0000000174" + "0000000167",
    );
  });

  test("invalid records are refused before encode", () => {
    const bad: Array<Partial<PolicyRecord>> = [
      { ns: "" },
      { topic: "" },
      { group: "" },
      { weight: 2 },
      { group: "g", weight: 0 },
      { group: "g", weight: -1 },
      { group: "g", weight: Number.POSITIVE_INFINITY },
      { maxLeased: 0 },
      { maxLeased: 1.5 },
      { rate: { count: 0, perMs: 1 } },
      { rate: { count: 1, perMs: 0 } },
      { rate: { count: 1, perMs: 2.5 } },
      { rate: undefined as unknown as null },
    ];
    for (const overrides of bad) expect(() => encodePolicyRecord(policy(overrides))).toThrow(AssertionError);
  });

  test("damaged values, another kind, unknown flags and versions before policies are refused", () => {
    const good = encodePolicyRecord(policy({ group: "g", maxLeased: 3 }));
    expect(() => decodePolicyRecord(good.subarray(0, good.length - 1))).toThrow();
    expect(() => decodePolicyRecord(new Uint8Array([...good, 0]))).toThrow(RecordDecodeError);
    expect(() => decodePauseRecord(good)).toThrow(RecordDecodeError);
    const flags = good.slice();
    flags[2] = 16;
    expect(() => decodePolicyRecord(flags)).toThrow("unknown flags");
    // A stored value that breaks the record's invariants is an assertion after decode.
    const zeroBound = good.slice();
    zeroBound.fill(0, 11, 19);
    expect(() => decodePolicyRecord(zeroBound)).toThrow(AssertionError);
    for (const version of [1, 2, 3]) {
      const old = good.slice();
      old[0] = version;
      expect(() => decodePolicyRecord(old)).toThrow(`record version ${version} has no policy records`);
    }
  });

  test("policy keys never collide across (ns, topic, group) splits, the topic's own (group null) included", () => {
    const keys = [
      policyKey("ab", "c", null),
      policyKey("a", "bc", null),
      policyKey("a:", "b", null),
      policyKey("a", ":b", null),
      policyKey("n", "t", null),
      policyKey("n", "t", "*"),
      policyKey("n", "t", "g"),
      policyKey("n", "t:g", null),
      policyKey("n", "t", ":g"),
      policyKey("n", "t:", "g"),
      policyKey("n", "t", "g:h"),
      policyKey("n", "t:g", "h"),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
