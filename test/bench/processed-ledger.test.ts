// Goal: the PostgreSQL comparison's ledger (bench/cluster/compare-shapes.ts)
// tells "every item exactly once" from a lost or a repeated item, so the
// smoke test's exactly-once check can fail.

import { describe, expect, test } from "bun:test";
import { ProcessedLedger } from "../../bench/cluster/compare-shapes.ts";

describe("ProcessedLedger", () => {
  test("every item once: distinct equals items, no duplicates, done", () => {
    const ledger = new ProcessedLedger(3);
    for (const index of [2, 0, 1]) ledger.record(index);
    expect({ processed: ledger.processed, distinct: ledger.distinct, duplicates: ledger.duplicates, done: ledger.doneAtMs !== null }).toEqual({
      processed: 3,
      distinct: 3,
      duplicates: 0,
      done: true,
    });
  });

  test("a repeat counts as processed but not distinct, and does not stand in for the missing item", () => {
    const ledger = new ProcessedLedger(3);
    for (const index of [0, 1, 1, 1]) ledger.record(index);
    expect({ processed: ledger.processed, distinct: ledger.distinct, duplicates: ledger.duplicates, done: ledger.done }).toEqual({
      processed: 4,
      distinct: 2,
      duplicates: 1,
      done: false,
    });
    ledger.record(2);
    expect({ done: ledger.done, doneAt: ledger.doneAtMs !== null }).toEqual({ done: true, doneAt: true });
  });

  test("an index outside 0..items-1 is an error, not a count", () => {
    const ledger = new ProcessedLedger(3);
    expect(() => ledger.record(3)).toThrow("unknown item index 3");
    expect(() => ledger.record(-1)).toThrow("unknown item index -1");
    expect(() => ledger.record(1.5)).toThrow("unknown item index 1.5");
    expect(ledger.processed).toBe(0);
  });
});
