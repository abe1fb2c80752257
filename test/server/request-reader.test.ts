// Goal: RequestReader.intBetween (bounds as arguments, used per batch item so
// no IntRange object is made per field) answers exactly as int() with the
// same range: the same value, or the same failure (code, message, field,
// index) for every kind of input, at and around both bounds.

import { describe, expect, test } from "bun:test";
import { WholeFloat } from "../../src/protocol/msgpack-codec.ts";
import { RequestReader } from "../../src/server/request-reader.ts";

const ranges = [
  { min: 0, max: 10 },
  { min: 1, max: 1 },
  { min: -(2 ** 31), max: 2 ** 31 - 1 },
  { min: 1, max: 100, overMaxTooLarge: true },
];
const values: unknown[] = [undefined, null, "3", true, 1.5, new WholeFloat(2), -1, 0, 1, 2, 9, 10, 11, 99, 100, 101, 2 ** 31, -(2 ** 31) - 1, Number.NaN];

function viaInt(value: unknown, range: (typeof ranges)[number], inList: boolean) {
  const reader = new RequestReader();
  if (inList) reader.at("items", 4);
  const result = reader.int({ f: value }, "f", range);
  return { result, failure: reader.failure };
}

function viaIntBetween(value: unknown, range: (typeof ranges)[number], inList: boolean) {
  const reader = new RequestReader();
  if (inList) reader.at("items", 4);
  const result = range.overMaxTooLarge === undefined ? reader.intBetween({ f: value }, "f", range.min, range.max) : reader.intBetween({ f: value }, "f", range.min, range.max, range.overMaxTooLarge);
  return { result, failure: reader.failure };
}

describe("RequestReader.intBetween", () => {
  test("agrees with int() on every value, range and position", () => {
    let failures = 0;
    for (const range of ranges) {
      for (const value of values) {
        for (const inList of [false, true]) {
          const expected = viaInt(value, range, inList);
          expect(viaIntBetween(value, range, inList)).toEqual(expected);
          if (expected.failure !== null) failures++;
        }
      }
    }
    // The table reaches failures of each kind, not only accepted values.
    expect(failures).toBeGreaterThan(40);
  });

  test("over max is TOO_LARGE only when asked, with the item's field path and index", () => {
    const reader = new RequestReader();
    reader.at("items", 2);
    expect(reader.intBetween({ n: 101 }, "n", 1, 100, true)).toBeNull();
    expect(reader.failure).toEqual({ code: "TOO_LARGE", message: "items[2].n: must be at most 100", field: "items[2].n", index: 2 });
    const plain = new RequestReader();
    expect(plain.intBetween({ n: 101 }, "n", 1, 100)).toBeNull();
    expect(plain.failure?.code).toBe("BAD_REQUEST");
    expect(new RequestReader().intBetween({}, "n", 1, 100)).toBeNull();
  });
});
