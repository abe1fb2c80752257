// A ClientClock that moves only when a test advances it: scheduled callbacks
// run in due order, each with the clock set to its due time (so one that
// schedules again, like the client's timeout sweep, runs again within the
// same advance when its next turn is due).

import type { ClientClock, ClientTimer } from "../../src/client/client-clock.ts";

interface Scheduled {
  atMs: number;
  /** Ties run in scheduling order. */
  order: number;
  run: () => void;
}

export class ManualClientClock implements ClientClock {
  private currentMs = 0;
  private nextOrder = 0;
  private readonly scheduled = new Set<Scheduled>();

  nowMs(): number {
    return this.currentMs;
  }

  schedule(run: () => void, delayMs: number): ClientTimer {
    const entry: Scheduled = { atMs: this.currentMs + Math.max(0, delayMs), order: this.nextOrder++, run };
    this.scheduled.add(entry);
    return entry;
  }

  cancel(timer: ClientTimer): void {
    this.scheduled.delete(timer as Scheduled);
  }

  /** Callbacks scheduled and not yet run or cancelled. */
  get pending(): number {
    return this.scheduled.size;
  }

  /** Move time forward by `deltaMs`, running every callback that falls due on the way. */
  advance(deltaMs: number): void {
    if (deltaMs < 0) throw new Error("ManualClientClock cannot go backwards");
    const endMs = this.currentMs + deltaMs;
    for (;;) {
      const due = this.earliestDue(endMs);
      if (due === null) break;
      this.scheduled.delete(due);
      this.currentMs = due.atMs;
      due.run();
    }
    this.currentMs = endMs;
  }

  private earliestDue(endMs: number): Scheduled | null {
    let best: Scheduled | null = null;
    for (const entry of this.scheduled) {
      if (entry.atMs > endMs) continue;
      if (best === null || entry.atMs < best.atMs || (entry.atMs === best.atMs && entry.order < best.order)) best = entry;
    }
    return best;
  }
}
