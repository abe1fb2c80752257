// Counters fed from the engine's running totals by label: deliveries the
// contract's bounds passed over, by reason (engine/groups/bounds.ts counts
// them: how often a dequeue skipped a topic its pause or its own bounds held
// back, and how often a group's max_leased or rate began holding its items
// back while the topic's other groups went on), and deliveries of items with
// `prefers`, by fit (engine/matching/fit-counts.ts).

import type { Registry } from "prom-client";
import { labelledTotalsCounter } from "./running-totals.ts";

type Totals = Readonly<Record<string, number>> | undefined;

/** Registers the passed-over counter on `registry`; returns what advances it from the engine's totals. */
export function passedOverCounter(registry: Registry): (totals: Totals) => void {
  return labelledTotalsCounter(
    registry,
    "orq_deliveries_passed_over_total",
    "Times a bound held back deliveries while others went on: a dequeue skipping a paused or bounded topic (topic_paused, topic_max_leased, topic_rate), a group's bound starting to hold it back (group_max_leased, group_rate).",
    "reason",
  );
}

/** Registers the preference-deliveries counter on `registry`; returns what advances it from the engine's totals. */
export function preferenceDeliveriesCounter(registry: Registry): (totals: Totals) => void {
  return labelledTotalsCounter(
    registry,
    "orq_preference_deliveries_total",
    "Deliveries of items with prefers, by fit: full (the worker satisfied every prefers entry), partial (it did not, and the item had no prefer_wait_ms), released (it did not, and took the item after its prefer_wait_ms ran out).",
    "fit",
  );
}
