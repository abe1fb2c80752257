// Deliveries the contract's bounds passed over, by reason (engine/groups/
// bounds.ts counts them): how often a dequeue skipped a topic its pause or
// its own bounds held back, and how often a group's max_leased or rate began
// holding its items back while the topic's other groups went on.

import { Counter, type Registry } from "prom-client";

/** Registers the counter on `registry`; returns what advances it from the engine's totals. */
export function passedOverCounter(registry: Registry): (totals: Readonly<Record<string, number>> | undefined) => void {
  const passedOver = new Counter({
    name: "orq_deliveries_passed_over_total",
    help: "Times a bound held back deliveries while others went on: a dequeue skipping a paused or bounded topic (topic_paused, topic_max_leased, topic_rate), a group's bound starting to hold it back (group_max_leased, group_rate).",
    labelNames: ["reason"],
    registers: [registry],
  });
  const last = new Map<string, number>();
  return (totals) => {
    if (totals === undefined) return;
    for (const [reason, total] of Object.entries(totals)) {
      const delta = total - (last.get(reason) ?? 0);
      if (delta > 0) passedOver.inc({ reason }, delta);
      last.set(reason, Math.max(last.get(reason) ?? 0, total));
    }
  };
}
