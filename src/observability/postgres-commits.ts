// What cluster mode's commits cost PostgreSQL, from the store's running
// counts (src/storage/postgres/commit-counters.ts; decision 036): commits,
// round trips, rows written and record bytes sent. Their ratios per item are
// the capacity model's inputs (docs/CLUSTER.md, "Capacity"). Absent on a
// single node.

import { Counter, type Registry } from "prom-client";
import { RunningTotals } from "./running-totals.ts";

/** The store's running counts, restated here: observability may not import storage's PostgreSQL store. */
export interface PostgresCommitFigures {
  commits: number;
  roundTrips: number;
  rowWrites: number;
  valueBytes: number;
}

const series: ReadonlyArray<readonly [keyof PostgresCommitFigures, string, string]> = [
  ["commits", "orq_postgres_commits_total", "Commits cluster mode sent to PostgreSQL (each one statement, or a transaction when it also writes pauses, policies or the key reservation)."],
  ["roundTrips", "orq_postgres_round_trips_total", "Awaited exchanges with PostgreSQL on behalf of commits."],
  ["rowWrites", "orq_postgres_row_writes_total", "Rows the commits inserted, updated or deleted, as PostgreSQL reported them."],
  ["valueBytes", "orq_postgres_record_bytes_total", "Bytes of item records the commits sent (whole values, or the changed prefix of a lease's patch)."],
];

/** Registers the counters on `registry`; returns what advances them from one reading of the store's counts. */
export function postgresCommitCounters(registry: Registry): (figures: PostgresCommitFigures | null | undefined) => void {
  const counters = series.map(([field, name, help]) => ({ field, counter: new Counter({ name, help, registers: [registry] }) }));
  const totals = new RunningTotals();
  return (figures) => {
    if (figures === null || figures === undefined) return;
    for (const { field, counter } of counters) {
      const growth = totals.growth(field, figures[field]);
      if (growth > 0) counter.inc(growth);
    }
  };
}
