// What `orq serve` says while it recovers: one line at the start (how much
// the store holds), a progress line about once a second (the phase, how far,
// the rate, and an estimate of the time left), and one line at the end (the
// counts and the duration). Time arrives as an argument from the caller's
// monotonic clock, so the rate and the once-a-second rule are tested with
// plain numbers.
//
// Recovery reads the outcomes, then reads every item, then files every item
// (engine/recovery/recovery.ts). The phases cost differently per record, so the
// percentage and the time left weigh them (recordWeights, measured); the rate
// is in whole items per second over the recovery so far, and the estimate
// assumes the rest goes as fast as what is done.

import type { RecoveryProgress } from "../engine/engine.ts";
import type { Logger } from "../server/logger.ts";

/** How often a progress line is logged (1 s): often enough to show life, rarely enough to stay readable. */
export const recoveryProgressIntervalMs = 1000;

/**
 * Relative cost of one record in each phase. Measured with
 * bench/recovery-turns.ts on 1,000,000 items: reading took 86-90% of the
 * time and filing 10-14%, so about 6 to 1. Reading an outcome is counted like
 * reading an item (a cursor step and a decode; not measured separately).
 */
const recordWeights = { outcomes: 6, items: 6, index: 1 } as const;

export interface StoredCounts {
  items: number;
  outcomes: number;
}

export class RecoveryLog {
  private lastLoggedMs: number;

  constructor(
    private readonly logger: Logger,
    private readonly counts: StoredCounts,
    private readonly startedAtMs: number,
  ) {
    this.lastLoggedMs = startedAtMs;
    logger.info("recovery started", { items: counts.items, outcomes: counts.outcomes });
  }

  /** After each step: logs a progress line when at least recoveryProgressIntervalMs passed since the last line (or the start). */
  step(progress: RecoveryProgress, nowMs: number): void {
    if (nowMs - this.lastLoggedMs < recoveryProgressIntervalMs) return;
    this.lastLoggedMs = nowMs;
    const { items, outcomes } = this.counts;
    const totalUnits = outcomes * recordWeights.outcomes + items * (recordWeights.items + recordWeights.index);
    const doneUnits = Math.min(totalUnits, unitsBefore(progress.phase, this.counts) + progress.done * recordWeights[progress.phase]);
    const elapsedS = (nowMs - this.startedAtMs) / 1000;
    const unitsPerS = elapsedS > 0 ? doneUnits / elapsedS : 0;
    this.logger.info("recovery progress", {
      phase: progress.phase,
      done: progress.done,
      of: progress.phase === "outcomes" ? outcomes : items,
      percent: totalUnits > 0 ? Math.floor((100 * doneUnits) / totalUnits) : 100,
      items_per_s: Math.round(unitsPerS / (recordWeights.items + recordWeights.index)),
      eta_s: unitsPerS > 0 ? Math.round((10 * (totalUnits - doneUnits)) / unitsPerS) / 10 : null,
    });
  }

  /** Once, when the engine is recovered. */
  end(nowMs: number): void {
    this.logger.info("recovered", { items: this.counts.items, outcomes: this.counts.outcomes, duration_ms: Math.round(nowMs - this.startedAtMs) });
  }
}

/** Weighted work of the phases before `phase`. */
function unitsBefore(phase: RecoveryProgress["phase"], counts: StoredCounts): number {
  if (phase === "outcomes") return 0;
  if (phase === "items") return counts.outcomes * recordWeights.outcomes;
  return counts.outcomes * recordWeights.outcomes + counts.items * recordWeights.items;
}
