// Goal: tokens resolve to their scopes, unknown tokens to null, "*" to every
// namespace; near-miss tokens (prefix, extra byte, empty) do not match.

import { describe, expect, test } from "bun:test";
import { scopeAllows, scopeList, TokenTable } from "../../src/server/auth.ts";

describe("TokenTable", () => {
  const table = new TokenTable([
    { token: "alpha", namespaces: ["a", "b"] },
    { token: "root", namespaces: ["x", "*"] },
  ]);

  test("required only when tokens are configured", () => {
    expect(table.required).toBe(true);
    expect(new TokenTable([]).required).toBe(false);
  });

  test("exact tokens match; near misses do not", () => {
    expect(table.lookup("alpha")).toEqual({ all: false, namespaces: new Set(["a", "b"]) });
    for (const miss of ["alph", "alpha ", "Alpha", "", "rootroot"]) expect(table.lookup(miss)).toBeNull();
  });

  test("scopes", () => {
    const scoped = table.lookup("alpha")!;
    expect(scopeAllows(scoped, "a")).toBe(true);
    expect(scopeAllows(scoped, "c")).toBe(false);
    expect(scopeList(scoped)).toEqual(["a", "b"]);
    const root = table.lookup("root")!;
    expect(scopeAllows(root, "anything")).toBe(true);
    expect(scopeList(root)).toBeNull();
  });
});
