// Schedule ticks by outcome (engine/schedules/schedules.ts counts them):
// enqueued (a new item), duplicate (a live item already held the tick's key),
// refused (the namespace quota said no: logged, not retried), failed (any
// other refusal, also not retried); and the schedules held now.

import { Gauge, type Registry } from "prom-client";
import { labelledTotalsCounter } from "./running-totals.ts";

/** Registers the counter and gauge on `registry`; returns what sets them from the engine's figures. */
export function scheduleMetrics(registry: Registry): (figures: { schedules: number; ticks: Readonly<Record<string, number>> } | undefined) => void {
  const ticks = labelledTotalsCounter(
    registry,
    "orq_schedule_ticks_total",
    "Schedule ticks since start, by outcome: enqueued, duplicate (the tick's key was live already), refused (the namespace quota; not retried), failed (any other refusal; not retried).",
    "outcome",
  );
  const held = new Gauge({ name: "orq_schedules", help: "Schedules held (in cluster mode: those of this node's shards).", registers: [registry] });
  return (figures) => {
    if (figures === undefined) return;
    held.set(figures.schedules);
    ticks(figures.ticks);
  };
}
