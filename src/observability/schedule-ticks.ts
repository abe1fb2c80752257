// Schedule ticks by outcome (engine/schedules/schedules.ts counts them):
// enqueued (a new item), duplicate (a live item already held the tick's key),
// refused (the namespace quota said no: logged, not retried), failed (any
// other refusal, also not retried); and the schedules held now.

import { Counter, Gauge, type Registry } from "prom-client";

/** Registers the counter and gauge on `registry`; returns what sets them from the engine's figures. */
export function scheduleMetrics(registry: Registry): (figures: { schedules: number; ticks: Readonly<Record<string, number>> } | undefined) => void {
  const ticks = new Counter({
    name: "orq_schedule_ticks_total",
    help: "Schedule ticks since start, by outcome: enqueued, duplicate (the tick's key was live already), refused (the namespace quota; not retried), failed (any other refusal; not retried).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const held = new Gauge({ name: "orq_schedules", help: "Schedules held (in cluster mode: those of this node's shards).", registers: [registry] });
  const last = new Map<string, number>();
  return (figures) => {
    if (figures === undefined) return;
    held.set(figures.schedules);
    for (const [outcome, total] of Object.entries(figures.ticks)) {
      const delta = total - (last.get(outcome) ?? 0);
      if (delta > 0) ticks.inc({ outcome }, delta);
      last.set(outcome, Math.max(last.get(outcome) ?? 0, total));
    }
  };
}
