// What storage reports (group-commit.ts's StorageEvents) as log lines: every
// circuit-breaker transition, slow commits and refusals for a full write
// queue (both rate-limited by storage), at warn level with their reason. Either one means the disk needs a look; a
// breaker that opens also means clients are getting UNAVAILABLE.

import type { StorageEvents } from "../storage/group-commit.ts";
import type { Logger } from "./logger.ts";

export function storageEventLog(logger: Logger): StorageEvents {
  return {
    breakerTransition: (transition) => {
      const fields: Record<string, unknown> = { from: transition.from, to: transition.to, reason: transition.reason };
      if (transition.retryAfterMs !== undefined) fields.retry_after_ms = transition.retryAfterMs;
      logger.warn("storage breaker transition", fields);
    },
    queueFull: (report) => {
      logger.warn("storage write queue full: requests refused with UNAVAILABLE", { refused: report.refused, pending_write_sets_max: report.pendingWriteSetsMax });
    },
    slowCommits: (report) => {
      logger.warn("slow storage commits (they succeeded; nothing was refused)", {
        slow_commits: report.slowCommits,
        duration_ms_max: Math.round(report.durationMsMax),
        threshold_ms: report.thresholdMs,
      });
    },
  };
}
