// Slow commits are reported, never refused. A commit that takes long but
// succeeds has made its writes durable; refusing the next requests would not
// make the disk faster, while group commit already puts more requests in each
// commit as commits slow down (docs/STORAGE.md, "What the breaker protects
// against"). So a slow commit feeds the log and the commit-duration metric,
// and nothing else. Reports are rate-limited: a slow disk must not flood the log.

/**
 * A commit taking longer than this is reported as slow (1 s): a healthy
 * fsync'd commit takes about 0.5 ms and a busy disk's 10-100 ms, so a second
 * means the device is struggling and an operator should look.
 */
export const slowCommitMs = 1000;
/** At most one slow-commit report per this interval (10 s), counting the slow commits since the last report. */
export const slowCommitReportIntervalMs = 10_000;

/** Slow commits since the last report. */
export interface SlowCommitReport {
  /** Commits that took longer than `thresholdMs` since the last report. */
  slowCommits: number;
  /** The longest of them. */
  durationMsMax: number;
  thresholdMs: number;
}

export class SlowCommitReporter {
  private sinceReport = 0;
  private durationMsMax = 0;
  private reportedAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly report: (report: SlowCommitReport) => void) {}

  /** Note one finished commit's duration; reports when it is slow and the last report is old enough. */
  note(durationMs: number, nowMs: number): void {
    if (!(durationMs > slowCommitMs)) return;
    this.sinceReport++;
    this.durationMsMax = Math.max(this.durationMsMax, durationMs);
    if (nowMs - this.reportedAtMs < slowCommitReportIntervalMs) return;
    this.report({ slowCommits: this.sinceReport, durationMsMax: this.durationMsMax, thresholdMs: slowCommitMs });
    this.reportedAtMs = nowMs;
    this.sinceReport = 0;
    this.durationMsMax = 0;
  }
}
