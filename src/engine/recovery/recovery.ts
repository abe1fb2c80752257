// Start-up: rebuild every in-memory index from what the store holds, through
// ItemStates' loader (ItemLoader: loadOutcome, loadItem, placeLoadedItem, ...),
// which alone places items in its indexes. Items
// load in two passes (dependencies can name any stored item); leases that
// ended while the server was down, TTLs and retention that passed, are left
// as due deadlines for the first tick. An empty store is a fresh start.
//
// The store is asked for items without their payload and metadata (memory
// never holds them for a stored item; the engine reads them back when it
// delivers or shows one), which spares two allocations and a copy per item.
//
// Recovery is a generator that stops after every `recordsPerTurnMax` records
// with its progress, so `orq serve` can let the event loop turn between
// steps (the HTTP port answers /healthz, a progress line is logged) while the
// engine itself stays synchronous and never sees time or a timer.

import { assert } from "../../lib/assert.ts";
import type { Store } from "../../storage/store.ts";
import { classifyAfter, type DependencyStatus } from "../state/dependencies.ts";
import { parseId } from "../state/ids.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemLoader } from "../state/item-states.ts";

/** Where recovery stands after a step: the phase it is in and how many records of that phase are done. */
export interface RecoveryProgress {
  /** "outcomes": retained outcomes read; "items": stored items read; "index": items filed into states, heaps and dependencies. */
  phase: "outcomes" | "items" | "index";
  /** Records of this phase done so far. */
  done: number;
}

/**
 * Recover, yielding the progress after every `recordsPerTurnMax` records of a phase; done when the generator returns.
 * `elsewhere`: cluster mode's test for an id on another node's shard, which counts as a live dependency (ops/remote-dependencies.ts).
 */
export function* loadStoreInSteps(
  loader: ItemLoader,
  store: Store,
  nowMs: number,
  recordsPerTurnMax: number,
  elsewhere: ((id: string) => boolean) | null = null,
): Generator<RecoveryProgress, void> {
  assert(recordsPerTurnMax >= 1, "recovery: recordsPerTurnMax must be at least 1");
  let outcomesDone = 0;
  for (const { id, record } of store.loadOutcomes()) {
    const parsed = parseId(id);
    assert(parsed !== null, `recovery: stored outcome under a malformed id ${id}`);
    loader.loadOutcome(parsed.shard, parsed.key, record.ns, record.outcome, record.endedAtMs, record.result ?? null);
    if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
  }
  // The acked log, oldest first; records past the retention are skipped and purged.
  const cutoffMs = nowMs - loader.limits.outcomeRetentionMs;
  let stale = false;
  for (const record of store.loadAckedLog()) {
    if (record.endedAtMs <= cutoffMs) {
      stale = true;
      continue;
    }
    for (let i = 0; i < record.keys.length; i++) {
      loader.loadAckedOutcome(record.namespaces[record.nsIndexes[i] as number] as string, record.keys[i] as number, record.endedAtMs);
      if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
    }
  }
  if (stale) loader.purgeAckedBefore(cutoffMs + 1);
  const loaded: LiveItem[] = [];
  for (const shard of store.loadShards({ bytes: false })) {
    for (const { key, record } of shard.items) {
      loaded.push(loader.loadItem(shard.shard, key, record, nowMs));
      if (loaded.length % recordsPerTurnMax === 0) yield { phase: "items", done: loaded.length };
    }
  }
  // Second pass, once every item is known: states, dependencies, deadlines.
  // Stored dead letters are the only items in state "dead" until the kills at the end.
  const toKill: Array<{ item: LiveItem; reason: string }> = [];
  const lookup = (id: string): DependencyStatus => {
    const dep = loader.items.get(id);
    if (dep !== undefined) return dep.state === "dead" ? "dead" : "live";
    const outcome = loader.ended.outcomeOfId(null, id);
    if (outcome !== undefined) return outcome;
    return elsewhere !== null && elsewhere(id) ? "live" : "unknown";
  };
  let indexed = 0;
  for (const item of loaded) {
    const after = item.state === "dead" || item.state === "leased" ? null : item.after;
    if (after === null) {
      loader.placeLoadedItem(item, null, nowMs);
    } else {
      const c = classifyAfter(after, lookup, Number.MAX_SAFE_INTEGER, { unknownIsSatisfied: true });
      loader.placeLoadedItem(item, c.kind === "waiting" ? c.unmet : null, nowMs);
      if (c.kind === "dead") toKill.push({ item, reason: c.deadReason });
    }
    if (++indexed % recordsPerTurnMax === 0) yield { phase: "index", done: indexed };
  }
  for (const { item, reason } of toKill) if (loader.items.holds(item) && item.state !== "dead") loader.killItem(item, reason);
  loader.endLoad();
}
