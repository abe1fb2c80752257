// Goal: keep the waits-cost bench (bench/micro/waits-cost.bench.ts, run once
// per `npm run bench:load` through bench/load/waits-cost-bound.ts) from
// rotting. Runs it at a tiny size through the runner bench:load uses and
// checks that its JSON line parses and that each figure is a number: waits
// parked at once, all of them answered after the acks, the heap per parked
// wait and per retained acked outcome for each result size. No timing or
// size is asserted: at this size the heap readings mean nothing.

import { describe, expect, test } from "bun:test";
import { measureWaitsCost, parseWaitsCost, retainedOutcome, type WaitsCostFigures } from "../../bench/load/waits-cost-bound.ts";

/** The tiny run takes a few seconds on the 2-core build box; the margin covers a loaded CI machine. */
const RUN_TIMEOUT_MS = 120_000;

function expectNumber(value: number | null | undefined, what: string): void {
  expect({ what, finite: typeof value === "number" && Number.isFinite(value) }).toEqual({ what, finite: true });
}

describe("waits-cost bench", () => {
  test("a line without the JSON prefix gives no figures", () => {
    expect(parseWaitsCost("waits: 10 parked\nsomething else\n")).toBeNull();
  });

  test(
    "a tiny run: every wait parked and answered, and each figure a number",
    async () => {
      const figures: WaitsCostFigures = await measureWaitsCost({ waits: 300, owners: 100, resultItems: 300 });
      const { waits } = figures;
      expect(waits).toMatchObject({ parked: 300, owners: 100, perOwner: 3, answered: 300, receiptsPerAck: 100 });
      for (const name of ["heapBytes", "perWaitBytes", "wakeMs", "acksAloneMs", "wakeUsPerWait"] as const) expectNumber(waits[name], `waits.${name}`);
      expect(figures.results.items).toBe(300);
      expect(figures.results.outcomes.map((outcome) => outcome.resultBytes)).toEqual([0, 100, 1024]);
      for (const outcome of figures.results.outcomes) {
        const what = `outcome with result ${outcome.resultBytes}`;
        expect(outcome.items).toBe(300);
        expect(outcome.roundsHeapBytes.length).toBe(3);
        for (const name of ["heapBytes", "perOutcomeBytes", "perOutcomeBeyondResultBytes"] as const) expectNumber(outcome[name], `${what}: ${name}`);
        expect(outcome.perOutcomeBeyondResultBytes).toBeCloseTo(outcome.perOutcomeBytes - outcome.resultBytes, 6);
      }
      // What a result adds is read against the outcome without one: none for that one itself.
      expect(retainedOutcome(figures, 0)?.perResultBytes).toBeNull();
      for (const size of [100, 1024]) {
        expectNumber(retainedOutcome(figures, size)?.perResultBytes, `result ${size}: perResultBytes`);
        expectNumber(retainedOutcome(figures, size)?.perResultBeyondBytes, `result ${size}: perResultBeyondBytes`);
      }
    },
    RUN_TIMEOUT_MS,
  );
});
