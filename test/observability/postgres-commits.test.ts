// Goal: the PostgreSQL commit counters follow the store's running counts:
// each scrape adds what they grew by, a single node (null) leaves them at 0,
// and a count that goes back (a store reopened) never makes one go down.

import { describe, expect, test } from "bun:test";
import { Registry } from "prom-client";
import { postgresCommitCounters } from "../../src/observability/postgres-commits.ts";

async function values(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) out[metric.name] = (metric.values[0]?.value as number | undefined) ?? 0;
  return out;
}

describe("orq_postgres_* counters", () => {
  test("follow the store's totals by their growth; null (a single node) changes nothing; a smaller total is not subtracted", async () => {
    const registry = new Registry();
    const refresh = postgresCommitCounters(registry);
    refresh(null);
    expect(await values(registry)).toEqual({ orq_postgres_commits_total: 0, orq_postgres_round_trips_total: 0, orq_postgres_row_writes_total: 0, orq_postgres_record_bytes_total: 0 });
    refresh({ commits: 2, roundTrips: 2, rowWrites: 6, valueBytes: 500 });
    refresh({ commits: 5, roundTrips: 7, rowWrites: 15, valueBytes: 800 });
    refresh({ commits: 1, roundTrips: 1, rowWrites: 1, valueBytes: 10 });
    expect(await values(registry)).toEqual({ orq_postgres_commits_total: 5, orq_postgres_round_trips_total: 7, orq_postgres_row_writes_total: 15, orq_postgres_record_bytes_total: 800 });
  });
});
