// Prometheus counters fed from running totals the engine or a store keeps
// (since start): each scrape adds what a total grew by since the last one.
// A total that went down (a store reopened, an engine rebuilt) adds nothing,
// and the counter goes on from the larger value seen, so it never goes back.

import { Counter, type Registry } from "prom-client";

/** The growth of running totals by key, between readings. */
export class RunningTotals {
  private readonly seen = new Map<string, number>();

  /** What `total` grew by since the last reading under `key` (0 when it did not grow). */
  growth(key: string, total: number): number {
    const seen = this.seen.get(key) ?? 0;
    if (total <= seen) return 0;
    this.seen.set(key, total);
    return total - seen;
  }
}

/** A counter with one label, registered on `registry`, whose series follow running totals by label value. */
export function labelledTotalsCounter(registry: Registry, name: string, help: string, label: string): (totals: Readonly<Record<string, number>> | undefined) => void {
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  const totals = new RunningTotals();
  return (figures) => {
    if (figures === undefined) return;
    for (const [value, total] of Object.entries(figures)) {
      const growth = totals.growth(value, total);
      if (growth > 0) counter.inc({ [label]: value }, growth);
    }
  };
}
