// Goal: the worker's nack delay is backoffBaseMs * 2^(attempt-1), capped at
// backoffMsMax, for every attempt including absurd ones (no overflow, no NaN).

import { describe, expect, test } from "bun:test";
import { nackDelayMs, workDefaults } from "../../src/client/index.ts";

describe("nackDelayMs", () => {
  test("doubles per attempt from the base", () => {
    expect([1, 2, 3, 4].map((a) => nackDelayMs(a, 1000, 1_000_000))).toEqual([1000, 2000, 4000, 8000]);
  });

  test("is capped at the maximum: just below, at and above the cap", () => {
    expect(nackDelayMs(3, 1000, 4001)).toBe(4000);
    expect(nackDelayMs(3, 1000, 4000)).toBe(4000);
    expect(nackDelayMs(4, 1000, 4000)).toBe(4000);
    expect(nackDelayMs(10_000, 1000, 300_000)).toBe(300_000);
  });

  test("attempt 0 or below is treated as the first", () => {
    expect(nackDelayMs(0, 500, 10_000)).toBe(500);
  });

  test("defaults: 1 s base, 5 min cap", () => {
    expect(nackDelayMs(1, workDefaults.backoffBaseMs, workDefaults.backoffMsMax)).toBe(1000);
    expect(nackDelayMs(20, workDefaults.backoffBaseMs, workDefaults.backoffMsMax)).toBe(300_000);
  });
});
