// Feeds the commit histograms from the GroupCommitter's commitStats(), which
// keeps counters and a ring of the most recent samples (1,024) per series. The
// sampler remembers how many commits it has seen and observes only the newer
// samples, so polling it often (the CLI polls every commitPollMs and before
// each scrape) loses nothing unless more than a ring's worth of commits
// happen between two polls; then the oldest unseen samples are skipped and
// counted in orq_commit_samples_dropped_total. The totals (commits, failures,
// refused write sets) are exact whatever the polling rate.

import type { CommitStats } from "../storage/commit-stats.ts";
import type { Metrics } from "./metrics.ts";

/** Poll period the CLI uses (250 ms): at most 4,096 commits/s fit the rings, above what fsync'd commits reach (~2,000/s). */
export const commitPollMs = 250;

export class CommitSampler {
  private seenCommits = 0;
  private samplesDroppedTotal = 0;

  constructor(
    private readonly source: () => CommitStats,
    private readonly metrics: Metrics,
  ) {}

  poll(): void {
    const stats = this.source();
    const fresh = stats.commitsTotal - this.seenCommits;
    if (fresh > 0) {
      this.seenCommits = stats.commitsTotal;
      // The rings are appended together, once per commit, so they have the same length.
      const available = Math.min(stats.recordsPerCommit.length, stats.writeSetsPerCommit.length, stats.commitMs.length);
      const taken = Math.min(fresh, available);
      for (let back = taken; back >= 1; back--) {
        this.metrics.commitObserved(
          stats.recordsPerCommit[stats.recordsPerCommit.length - back]!,
          stats.writeSetsPerCommit[stats.writeSetsPerCommit.length - back]!,
          stats.commitMs[stats.commitMs.length - back]!,
        );
      }
      this.samplesDroppedTotal += fresh - taken;
    }
    this.metrics.commitTotals({
      commitsTotal: stats.commitsTotal,
      commitFailuresTotal: stats.commitFailuresTotal,
      writeSetsRejectedTotal: stats.writeSetsRejectedTotal,
      samplesDroppedTotal: this.samplesDroppedTotal,
    });
  }
}
