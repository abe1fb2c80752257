// The JSON a run of the PostgreSQL comparison writes (compare-pg.ts), which
// the page (compare-page.ts) and the smoke test read.

import type { MachineInfo } from "../load/machine.ts";
import type { PairResult, ShapePair } from "./compare-shapes.ts";

export interface CompareReport {
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  /** PostgreSQL's server_version, fsync, synchronous_commit, full_page_writes and wal_level. */
  postgres: Record<string, string>;
  options: {
    items: number;
    /** Items each serving process (each orq node, or the benchmark process for a library) enqueued and drained before its pair's timed run (decision 043); absent in reports from before the warm-up, which had none. */
    warmupItems?: number;
    /** True when warmupItems is per serving process; absent in earlier reports, whose warm-up was per pair whatever the node count. */
    warmupPerProcess?: boolean;
    nodes: number[];
    orders: string[];
    pairs: string[];
    systems: string[];
  };
  /** By contender label ("orq, 3 nodes", "pg-boss 12.38.1"), then by pair. */
  results: Record<string, Partial<Record<ShapePair, PairResult>>>;
  /** "label, pair" → the error that stopped it. */
  failed: Record<string, string>;
}
