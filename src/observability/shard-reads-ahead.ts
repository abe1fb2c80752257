// Cluster mode: the shards a node read ahead of a takeover while their
// silent owner's lease ran out, by what its claim found: kept (nothing of
// the shard changed since the read began) or read again (it changed: the
// owner was slow or paused, not dead). From the PostgreSQL store's running
// counts (decisions/050). And the shards it filed into its engine ahead of
// the claim, by what became of that copy: finished at the claim, or dropped
// (the owner renewed, another node claimed it, or the claim read the shard
// again); from the cluster engine's counts (decisions/053). Absent on a
// single node.

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

/** Registers the filed-ahead counter on `registry`; returns what advances it from one reading of the counts by result. */
export function shardsFiledAheadCounter(registry: Registry): (totals: Readonly<Record<string, number>> | undefined) => void {
  return labelledTotalsCounter(
    registry,
    "orq_cluster_shards_filed_ahead_total",
    "Shards filed into the engine ahead of a takeover's claim: finished at the claim (the read kept), or dropped (let go, or read again; decision 053).",
    "result",
  );
}
