// Cluster mode: the shards a node read ahead of a takeover while their
// silent owner's lease ran out, by what its claim found: kept (nothing of
// the shard changed since the read began) or read again (it changed: the
// owner was slow or paused, not dead). From the PostgreSQL store's running
// counts (decisions/050). Absent on a single node.

import type { Registry } from "prom-client";
import { labelledTotalsCounter } from "./running-totals.ts";

/** Registers the counter on `registry`; returns what advances it from one reading of the counts by result. */
export function shardReadsAheadCounter(registry: Registry): (totals: Readonly<Record<string, number>> | undefined) => void {
  return labelledTotalsCounter(
    registry,
    "orq_cluster_shard_reads_ahead_total",
    "Shards read ahead of a takeover while their owner's lease ran out: kept at the claim (unchanged since), or read again (changed; decision 050).",
    "result",
  );
}
