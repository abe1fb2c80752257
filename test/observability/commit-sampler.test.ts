// Goal: the CommitSampler observes each commit's samples exactly once however
// often it polls, counts the commits it could not see when more than a ring's
// worth happened between polls, and turns absolute totals into counters.

import { describe, expect, test } from "bun:test";
import { CommitSampler } from "../../src/observability/commit-sampler.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { RecentSamples, type CommitStats } from "../../src/storage/commit-stats.ts";
import { findSample, parsePrometheusText } from "./prometheus-text.ts";

class FakeWriter {
  commits = 0;
  rejected = 0;
  private readonly records: RecentSamples;
  private readonly sets: RecentSamples;
  private readonly ms: RecentSamples;
  constructor(capacity: number) {
    this.records = new RecentSamples(capacity);
    this.sets = new RecentSamples(capacity);
    this.ms = new RecentSamples(capacity);
  }
  commit(records: number): void {
    this.commits++;
    this.records.add(records);
    this.sets.add(1);
    this.ms.add(0.5);
  }
  stats(): CommitStats {
    return {
      commitsTotal: this.commits,
      commitFailuresTotal: 0,
      writeSetsRejectedTotal: this.rejected,
      recordsPerCommit: this.records.toArray(),
      writeSetsPerCommit: this.sets.toArray(),
      commitMs: this.ms.toArray(),
    };
  }
}

async function read(metrics: ReturnType<typeof createMetrics>, name: string): Promise<number | undefined> {
  return findSample(parsePrometheusText(await metrics.render()), name)?.value;
}

describe("CommitSampler", () => {
  test("each commit is observed once across polls; totals are counters", async () => {
    const writer = new FakeWriter(8);
    const metrics = createMetrics({ processMetrics: false });
    const sampler = new CommitSampler(() => writer.stats(), metrics);
    writer.commit(3);
    writer.commit(4);
    sampler.poll();
    sampler.poll();
    writer.commit(5);
    writer.rejected = 2;
    sampler.poll();
    expect(await read(metrics, "orq_commit_records_count")).toBe(3);
    expect(await read(metrics, "orq_commit_records_sum")).toBe(12);
    expect(await read(metrics, "orq_commits_total")).toBe(3);
    expect(await read(metrics, "orq_write_sets_rejected_total")).toBe(2);
    expect(await read(metrics, "orq_commit_samples_dropped_total")).toBe(0);
  });

  test("more commits than the ring holds between polls: the rest are counted as dropped", async () => {
    const writer = new FakeWriter(4);
    const metrics = createMetrics({ processMetrics: false });
    const sampler = new CommitSampler(() => writer.stats(), metrics);
    for (let i = 0; i < 4; i++) writer.commit(1); // capacity: all seen
    sampler.poll();
    for (let i = 0; i < 5; i++) writer.commit(2); // capacity + 1: one lost
    sampler.poll();
    expect(await read(metrics, "orq_commit_records_count")).toBe(8);
    expect(await read(metrics, "orq_commit_records_sum")).toBe(4 + 8);
    expect(await read(metrics, "orq_commit_samples_dropped_total")).toBe(1);
    expect(await read(metrics, "orq_commits_total")).toBe(9);
  });
});
