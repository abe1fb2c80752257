// Counters and recent samples of the GroupCommitter's commits, for the
// metrics endpoint and for the report of batch sizes under load. Samples live
// in fixed rings, so memory stays bounded however long the server runs.

/** Recent samples kept per series (1,024): enough for stable percentiles, small enough to copy on a scrape. */
const recentSamplesMax = 1024;

/** A fixed ring of the most recent numeric samples. */
export class RecentSamples {
  private readonly values: Float64Array;
  private count = 0;
  private next = 0;

  constructor(capacity = recentSamplesMax) {
    this.values = new Float64Array(capacity);
  }

  add(value: number): void {
    this.values[this.next] = value;
    this.next = (this.next + 1) % this.values.length;
    if (this.count < this.values.length) this.count++;
  }

  /** The samples, oldest first (a copy). */
  toArray(): number[] {
    const result: number[] = [];
    const start = this.count < this.values.length ? 0 : this.next;
    for (let index = 0; index < this.count; index++) {
      result.push(this.values[(start + index) % this.values.length] as number);
    }
    return result;
  }
}

/** The value at quantile q (0..1) of the samples, or 0 when there are none. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

export interface CommitStats {
  /** Commits started and finished. */
  commitsTotal: number;
  /** Commits in which at least one shard (or the outcome/meta part) failed. */
  commitFailuresTotal: number;
  /** Write sets rejected before any commit because a shard's breaker was open (or the queue was full). */
  writeSetsRejectedTotal: number;
  /** Recent samples, oldest first. */
  writeSetsPerCommit: number[];
  /** Records (items and outcomes, after coalescing) per commit. */
  recordsPerCommit: number[];
  /** Commit duration in ms, as timed by the GroupCommitter's stopwatch. */
  commitMs: number[];
}
