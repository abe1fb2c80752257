// Goal: recovery says what it does: one line at the start with the counts, a
// progress line at most once per recoveryProgressIntervalMs (phase, count,
// percent of all work, rate, estimated time left), and one line at the end
// with the counts and the duration. Time is passed in, so every number is exact.

import { describe, expect, test } from "bun:test";
import { RecoveryLog, recoveryProgressIntervalMs } from "../../src/cli/recovery-log.ts";
import type { LogFields, Logger } from "../../src/server/logger.ts";

function capture(): { logger: Logger; lines: Array<{ message: string; fields: LogFields | undefined }> } {
  const lines: Array<{ message: string; fields: LogFields | undefined }> = [];
  const push = (message: string, fields?: LogFields): void => {
    lines.push({ message, fields });
  };
  return { logger: { debug: push, info: push, warn: push, error: push, fatal: push }, lines };
}

describe("RecoveryLog", () => {
  test("start line, progress at most once a second with rate and time left, end line with the duration", () => {
    const { logger, lines } = capture();
    // Weighted work (6 per outcome or item read, 1 per item filed): 1,000 x 6 + 10,000 x 7 = 76,000 units.
    const log = new RecoveryLog(logger, { items: 10_000, outcomes: 1000 }, 5000);
    expect(lines).toEqual([{ message: "recovery started", fields: { items: 10_000, outcomes: 1000 } }]);

    // Before a full interval has passed: nothing (limit - 1).
    log.step({ phase: "outcomes", done: 1000 }, 5000 + recoveryProgressIntervalMs - 1);
    expect(lines).toHaveLength(1);
    // At the interval: 6,000 + 3,000 x 6 = 24,000 units in 1 s; 24,000 / 7 items per second; 52,000 units left.
    log.step({ phase: "items", done: 3000 }, 5000 + recoveryProgressIntervalMs);
    expect(lines[1]).toEqual({
      message: "recovery progress",
      fields: { phase: "items", done: 3000, of: 10_000, percent: 31, items_per_s: 3429, eta_s: 2.2 },
    });
    // The next line needs another full interval from the last one.
    log.step({ phase: "items", done: 9000 }, 5000 + 2 * recoveryProgressIntervalMs - 1);
    expect(lines).toHaveLength(2);
    // 6,000 + 60,000 + 5,000 = 71,000 units in 2.5 s: 28,400 units/s, 5,000 left.
    log.step({ phase: "index", done: 5000 }, 7500);
    expect(lines[2]).toEqual({
      message: "recovery progress",
      fields: { phase: "index", done: 5000, of: 10_000, percent: 93, items_per_s: 4057, eta_s: 0.2 },
    });
    log.end(8250);
    expect(lines[3]).toEqual({ message: "recovered", fields: { items: 10_000, outcomes: 1000, duration_ms: 3250 } });
    expect(lines).toHaveLength(4);
  });

  test("an empty store: start and end lines, and a step never claims more than all the work", () => {
    const { logger, lines } = capture();
    const log = new RecoveryLog(logger, { items: 0, outcomes: 0 }, 0);
    log.step({ phase: "items", done: 5 }, 2000);
    expect(lines[1]?.fields).toMatchObject({ percent: 100, items_per_s: 0, eta_s: null });
    log.end(2000);
    expect(lines.map((line) => line.message)).toEqual(["recovery started", "recovery progress", "recovered"]);
  });
});
