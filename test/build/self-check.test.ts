// Goal: the start-up self-check passes with the installed lmdb addon and
// names the problem for each way a binding can be broken.

import { describe, expect, test } from "bun:test";
import { checkNativeAddons, checkNativeBinding } from "../../src/cli/self-check.ts";

class Fake {}
const completeBinding = { Env: Fake, Txn: Fake, Dbi: Fake, Cursor: Fake, version: { major: 0, minor: 9, patch: 90 } };

describe("checkNativeAddons", () => {
  test("passes with the lmdb addon installed in node_modules", () => {
    expect(checkNativeAddons()).toEqual({ ok: true });
  });

  test("passes a complete binding", () => {
    expect(checkNativeBinding(completeBinding)).toEqual({ ok: true });
  });

  test.each([
    ["undefined", undefined, "exports no native binding"],
    ["null", null, "exports no native binding"],
    ["a binding without Cursor", { ...completeBinding, Cursor: undefined }, "missing Cursor"],
    ["a binding without Env and Dbi", { ...completeBinding, Env: 1, Dbi: "x" }, "missing Env, Dbi"],
    ["a binding without version", { ...completeBinding, version: undefined }, "reports no version"],
    ["a binding with a non-numeric version", { ...completeBinding, version: { major: "0", minor: 9 } }, "reports no version"],
  ])("fails %s", (_, binding, fragment) => {
    const result = checkNativeBinding(binding);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(fragment);
  });
});
