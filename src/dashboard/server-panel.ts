// The overview's server panel numbers that no op reports: commit latency
// percentiles over the storage writer's ring of recent commit times, the
// store's circuit breaker, and the LMDB store's ring of recent items'
// payloads. Wired by `orq serve` from the GroupCommitter and the store.

import type { BreakerState } from "../storage/circuit-breaker.ts";
import type { CommitStats } from "../storage/commit-stats.ts";
import type { RecentValuesFigures } from "../storage/store.ts";
import type { ServerPanel } from "./page-context.ts";

/** The q-quantile (0..1) of a sorted array, nearest rank; null when empty. */
function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function serverPanelFrom(commits: CommitStats, breaker: BreakerState, recentValues: RecentValuesFigures | null): ServerPanel {
  const sorted = [...commits.commitMs].sort((a, b) => a - b);
  return { commitMsP50: quantile(sorted, 0.5), commitMsP99: quantile(sorted, 0.99), commitSamples: sorted.length, breaker, recentValues };
}
