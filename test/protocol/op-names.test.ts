// Goal: the contract's op names are one list without repeats, and isOpName
// says yes to exactly its members: not to other strings (names of Object's
// own properties included) and not to other values.

import { expect, test } from "bun:test";
import { isOpName, opNames } from "../../src/protocol/op-names.ts";

test("the op names are distinct", () => {
  expect(new Set(opNames).size).toBe(opNames.length);
});

test("isOpName accepts each op name and nothing else", () => {
  for (const name of opNames) expect(isOpName(name)).toBe(true);
  for (const other of ["", "Hello", "ping ", "unknown", "__proto__", "constructor", "toString", 1, null, undefined, ["ping"], { op: "ping" }]) expect(isOpName(other)).toBe(false);
});
