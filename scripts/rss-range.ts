// The lowest and highest RSS of a process between two soak report lines.
// One reading every 30 s lands anywhere on the collector's sawtooth (the heap
// fills with garbage for a few seconds, then a full collection empties it),
// so the soak also reads /proc/PID/status every `everyMs` and keeps each
// interval's trough and peak. The troughs follow what stays live after
// JavaScriptCore's own collections, with no collection forced; the peaks
// follow the sawtooth's top. A leak lifts both; a sawtooth alone lifts
// neither.

import { readMemory } from "../bench/load/processes.ts";

export interface RssRange {
  /** Readings taken in the interval (the one at its end included). */
  readings: number;
  rssTroughKiB: number;
  rssPeakKiB: number;
  rssAnonTroughKiB: number;
  rssAnonPeakKiB: number;
}

export class RssRangeSampler {
  private range: RssRange = RssRangeSampler.empty();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly pid: number,
    everyMs: number,
  ) {
    this.timer = setInterval(() => this.read(), everyMs);
  }

  /** Takes one more reading, returns the interval's range and starts the next interval. */
  take(): RssRange {
    this.read();
    const range = this.range;
    this.range = RssRangeSampler.empty();
    return range;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private read(): void {
    let memory;
    try {
      memory = readMemory(this.pid, false);
    } catch {
      return; // the process is gone; the soak reports its exit
    }
    const { rssKiB, rssAnonKiB } = memory;
    const r = this.range;
    r.readings++;
    r.rssTroughKiB = Math.min(r.rssTroughKiB, rssKiB);
    r.rssPeakKiB = Math.max(r.rssPeakKiB, rssKiB);
    r.rssAnonTroughKiB = Math.min(r.rssAnonTroughKiB, rssAnonKiB);
    r.rssAnonPeakKiB = Math.max(r.rssAnonPeakKiB, rssAnonKiB);
  }

  private static empty(): RssRange {
    return { readings: 0, rssTroughKiB: Infinity, rssPeakKiB: 0, rssAnonTroughKiB: Infinity, rssAnonPeakKiB: 0 };
  }
}
