// What the delivery read path holds in memory, at scrape time: the LMDB
// map's pages resident in the process (what deliveries and the delivery
// prefetch read in; the map-page policy unmaps them as they grow,
// docs/decisions/010-map-page-unmapping.md), the keys the delivery
// prefetch has asked the store to read in (docs/decisions/028-delivery-prefetch.md),
// and the ring of the recently committed items' delivery parts that answers
// deliveries before the map (docs/decisions/044-recent-values.md).

import { Counter, Gauge, type Registry } from "prom-client";
import type { RecentValuesFigures } from "../storage/store.ts";
import { labelledTotalsCounter, RunningTotals } from "./running-totals.ts";

export interface StoreReadFigures {
  /** Resident bytes of the store's map; null where it cannot be read (no LMDB store, or no /proc). */
  mapResidentBytes: number | null;
  /** Keys the delivery prefetch asked for, since start. */
  prefetchKeysTotal: number;
  /** The LMDB store's ring of recent values (storage/lmdb/recent-values.ts); null without one. */
  recentValues: RecentValuesFigures | null;
}

/** Registers the gauges on `registry`; returns what sets them from one reading. */
export function storeReadGauges(registry: Registry): (figures: StoreReadFigures | undefined) => void {
  const mapResident = new Gauge({
    name: "orq_store_map_resident_bytes",
    help: "The LMDB map's pages resident in this process: what deliveries and the delivery prefetch read in, until the map-page policy unmaps them.",
    registers: [registry],
  });
  const prefetchKeys = new Counter({
    name: "orq_delivery_prefetch_keys_total",
    help: "Items whose stored values the delivery prefetch asked the store to read in off the main thread.",
    registers: [registry],
  });
  const recentBytes = new Gauge({
    name: "orq_store_recent_values_bytes",
    help: "Bytes of the ring of recently committed items' delivery parts written so far (up to --recent-values-mb): what it adds to the server's memory.",
    registers: [registry],
  });
  const recentReads = labelledTotalsCounter(
    registry,
    "orq_store_recent_value_reads_total",
    "Deliveries' reads of an item's payload, by whether the ring of recent values answered (hit) or LMDB did (miss).",
    "result",
  );
  const totals = new RunningTotals();
  return (figures) => {
    if (figures === undefined) return;
    if (figures.mapResidentBytes !== null) mapResident.set(figures.mapResidentBytes);
    const growth = totals.growth("prefetchKeys", figures.prefetchKeysTotal);
    if (growth > 0) prefetchKeys.inc(growth);
    const recent = figures.recentValues;
    if (recent === null) return;
    recentBytes.set(recent.bytes);
    recentReads({ hit: recent.hits, miss: recent.misses });
  };
}
