// Deliveries of items with `prefers`, by how the worker fitted
// (docs/decisions/030-preferences.md): a full fit, a partial fit of an item
// that never waited (prefer_wait_ms 0), or a release (a worker without a full
// fit took an item after its wait ran out). Kept per topic (the dashboard's
// matching view) and per engine (stats, /metrics).

/** The three ways a preferring item is delivered. */
export class FitCounts {
  full = 0;
  partial = 0;
  released = 0;

  /** Counts one delivery: `full` when the worker fits fully, else by whether the item had a wait to run out. */
  count(full: boolean, waited: boolean): void {
    if (full) this.full++;
    else if (waited) this.released++;
    else this.partial++;
  }
}
