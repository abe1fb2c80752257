// Goal: the op table holds exactly the contract's ops (protocol/op-names.ts),
// so adding an op means adding its name there and its handler here, and
// lookupOp finds each of them and nothing else, names of Object's own
// properties included.

import { expect, test } from "bun:test";
import { opNames } from "../../src/protocol/op-names.ts";
import { lookupOp, opTable } from "../../src/server/op-table.ts";

test("the op table covers exactly the contract's op names", () => {
  expect(Object.keys(opTable).sort()).toEqual([...opNames].sort());
});

test("lookupOp finds every op of the contract, and no other name", () => {
  for (const name of opNames) expect(lookupOp(name)).toBe(opTable[name]);
  for (const name of ["", "frobnicate", "HELLO", "ping ", "__proto__", "constructor", "toString", "hasOwnProperty"]) expect(lookupOp(name)).toBeUndefined();
});
