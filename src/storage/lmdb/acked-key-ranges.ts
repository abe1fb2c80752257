// The acked keys of the whole acked log as sorted key ranges, read at
// recovery: an item whose record is still stored but whose key is acked is a
// record the ack sweep (ack-sweep.ts) had not deleted yet when the server
// stopped. Recovery skips it and queues its delete.
//
// Each range carries the end time of the log record it came from; where
// ranges of several records touch, the merged range keeps the earliest, so a
// queued delete is due no later than the first of those records' purges.

import { ackedLogEndedAtMs, visitAckedLog } from "../acked-log.ts";
import type { ItemKey } from "../item-key.ts";

export class AckedKeyRanges {
  private readonly starts: Float64Array;
  /** Exclusive. */
  private readonly ends: Float64Array;
  private readonly endedAtMs: Float64Array;

  /** From the acked log's stored records (any order). */
  constructor(records: Iterable<Uint8Array>) {
    const runs: Array<{ start: number; end: number; endedAtMs: number }> = [];
    for (const bytes of records) {
      const endedAtMs = ackedLogEndedAtMs(bytes);
      visitAckedLog(bytes, (_nsIndex, start, length) => {
        runs.push({ start, end: start + length, endedAtMs });
      });
    }
    runs.sort((a, b) => a.start - b.start);
    const merged: typeof runs = [];
    for (const run of runs) {
      const last = merged[merged.length - 1];
      if (last !== undefined && run.start <= last.end) {
        last.end = Math.max(last.end, run.end);
        last.endedAtMs = Math.min(last.endedAtMs, run.endedAtMs);
      } else {
        merged.push({ ...run });
      }
    }
    this.starts = Float64Array.from(merged, (run) => run.start);
    this.ends = Float64Array.from(merged, (run) => run.end);
    this.endedAtMs = Float64Array.from(merged, (run) => run.endedAtMs);
  }

  get rangeCount(): number {
    return this.starts.length;
  }

  /** The end time of the acked-log record holding `key`, or null when the key is not acked. */
  ackedAtMs(key: ItemKey): number | null {
    // The last range starting at or below the key.
    let low = 0;
    let high = this.starts.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if ((this.starts[middle] as number) <= key) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    if (found < 0 || key >= (this.ends[found] as number)) return null;
    return this.endedAtMs[found] as number;
  }
}
