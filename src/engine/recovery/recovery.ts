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
import type { AckedLogRecord } from "../../storage/acked-log.ts";
import type { OutcomeRecord } from "../../storage/record.ts";
import type { ItemKey, LoadedShard, Store } from "../../storage/store.ts";
import type { Topic } from "../ready/topic.ts";
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
  const stale = yield* loadOutcomesInSteps(loader, store.loadOutcomes(), store.loadAckedLog(), nowMs, recordsPerTurnMax, null);
  if (stale) loader.purgeAckedBefore(nowMs - loader.limits.outcomeRetentionMs + 1);
  killLoadedItems(loader, yield* loadItemsInSteps(loader, store.loadShards({ bytes: false }), nowMs, recordsPerTurnMax, elsewhere, null));
  loader.endLoad();
}

/**
 * Outcome records, then the acked log (oldest first; records past the
 * retention are skipped). `skipHeld`: an acked key the loader already holds
 * is not added again (a shard adopted again after it was dropped:
 * ended-items.ts keeps acked ends across a drop). Returns whether a record
 * was past the retention (recovery then purges them).
 */
export function* loadOutcomesInSteps(
  loader: ItemLoader,
  outcomes: Iterable<{ id: string; record: OutcomeRecord }>,
  ackedLog: Iterable<AckedLogRecord>,
  nowMs: number,
  recordsPerTurnMax: number,
  skipHeld: ((ns: string, key: ItemKey) => boolean) | null,
): Generator<RecoveryProgress, boolean> {
  let outcomesDone = 0;
  for (const { id, record } of outcomes) {
    const parsed = parseId(id);
    assert(parsed !== null, `recovery: stored outcome under a malformed id ${id}`);
    loader.loadOutcome(parsed.shard, parsed.key, record.ns, record.outcome, record.endedAtMs, record.result ?? null);
    if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
  }
  const cutoffMs = nowMs - loader.limits.outcomeRetentionMs;
  let stale = false;
  for (const record of ackedLog) {
    if (record.endedAtMs <= cutoffMs) {
      stale = true;
      continue;
    }
    for (let i = 0; i < record.keys.length; i++) {
      const ns = record.namespaces[record.nsIndexes[i] as number] as string;
      const key = record.keys[i] as number;
      if (skipHeld === null || !skipHeld(ns, key)) loader.loadAckedOutcome(ns, key, record.endedAtMs);
      if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
    }
  }
  return stale;
}

/**
 * Stored items in two passes (dependencies can name any stored item): each
 * enters memory, then, once every item is known, takes its place (states,
 * dependencies, deadlines). Returns the items whose dependencies failed,
 * for the caller to kill (killLoadedItems: a kill is written).
 * `touched`, when given, collects the topics the items joined.
 */
export function* loadItemsInSteps(
  loader: ItemLoader,
  shards: Iterable<LoadedShard>,
  nowMs: number,
  recordsPerTurnMax: number,
  elsewhere: ((id: string) => boolean) | null,
  touched: Set<Topic<LiveItem>> | null,
): Generator<RecoveryProgress, Array<{ item: LiveItem; reason: string }>> {
  const loaded: LiveItem[] = [];
  for (const shard of shards) {
    for (const { key, record } of shard.items) {
      loaded.push(loader.loadItem(shard.shard, key, record, nowMs));
      if (loaded.length % recordsPerTurnMax === 0) yield { phase: "items", done: loaded.length };
    }
  }
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
    touched?.add(item.topic);
    if (++indexed % recordsPerTurnMax === 0) yield { phase: "index", done: indexed };
  }
  return toKill;
}

/** Kill the items loadItemsInSteps found waiting on a failed dependency (each kill is written). */
export function killLoadedItems(loader: ItemLoader, toKill: ReadonlyArray<{ item: LiveItem; reason: string }>): void {
  for (const { item, reason } of toKill) if (loader.items.holds(item) && item.state !== "dead") loader.killItem(item, reason);
}
