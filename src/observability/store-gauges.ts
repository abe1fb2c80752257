// What the delivery read path holds in memory, at scrape time: the LMDB
// map's pages resident in the process (what deliveries and the delivery
// prefetch read in; the map-page policy unmaps them as they grow,
// docs/decisions/010-map-page-unmapping.md), and the keys the delivery
// prefetch has asked the store to read in (docs/decisions/028-delivery-prefetch.md).

import { Counter, Gauge, type Registry } from "prom-client";
import { RunningTotals } from "./running-totals.ts";

export interface StoreReadFigures {
  /** Resident bytes of the store's map; null where it cannot be read (no LMDB store, or no /proc). */
  mapResidentBytes: number | null;
  /** Keys the delivery prefetch asked for, since start. */
  prefetchKeysTotal: number;
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
  const totals = new RunningTotals();
  return (figures) => {
    if (figures === undefined) return;
    if (figures.mapResidentBytes !== null) mapResident.set(figures.mapResidentBytes);
    const growth = totals.growth("prefetchKeys", figures.prefetchKeysTotal);
    if (growth > 0) prefetchKeys.inc(growth);
  };
}
