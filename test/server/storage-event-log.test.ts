// Goal: every breaker transition and every slow-commit report reaches the
// server's JSON log at warn level, with its reason and numbers.

import { describe, expect, test } from "bun:test";
import { createJsonLogger } from "../../src/server/logger.ts";
import { storageEventLog } from "../../src/server/storage-event-log.ts";

describe("storageEventLog", () => {
  test("breaker transitions and slow commits are warn lines with their reason", () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createJsonLogger("warn", (line) => lines.push(JSON.parse(line) as Record<string, unknown>), () => 0);
    const events = storageEventLog(logger);
    events.breakerTransition({ from: "closed", to: "open", reason: "5 commits failed within 10000 ms, the last with: EIO", retryAfterMs: 5000 });
    events.breakerTransition({ from: "probing", to: "closed", reason: "the probe commit succeeded" });
    events.slowCommits({ slowCommits: 3, durationMsMax: 1234.5, thresholdMs: 1000 });
    events.queueFull({ refused: 7, pendingWriteSetsMax: 100_000 });
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ["warn", "storage breaker transition"],
      ["warn", "storage breaker transition"],
      ["warn", "slow storage commits (they succeeded; nothing was refused)"],
      ["warn", "storage write queue full: requests refused with UNAVAILABLE"],
    ]);
    expect(lines[3]).toMatchObject({ refused: 7, pending_write_sets_max: 100_000 });
    expect(lines[0]).toMatchObject({ from: "closed", to: "open", reason: "5 commits failed within 10000 ms, the last with: EIO", retry_after_ms: 5000 });
    expect(lines[1]).toMatchObject({ from: "probing", to: "closed", reason: "the probe commit succeeded" });
    expect(lines[1]?.retry_after_ms).toBeUndefined();
    expect(lines[2]).toMatchObject({ slow_commits: 3, duration_ms_max: 1235, threshold_ms: 1000 });
  });
});
