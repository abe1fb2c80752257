// Cluster mode: one shard moving into or out of a running engine, without
// rebuilding the engine and without touching the other shards' items.
//
// Adopting a shard is recovery restricted to it (recovery.ts's steps over
// the shard's stored state), plus what recovery does for the whole store at
// once and a running engine must do for the one shard: items of the shards
// already served that wait on an id of the adopted shard counted it as live
// (it was elsewhere); now it is local, so each such dependency is settled as
// recovery would have found it (an ended or unknown id releases or kills its
// dependents). The caller keeps the shard unserved until the last step (the
// writer refuses it, so nothing of it is delivered while it loads), then
// serves it and wakes the topics it touched.
//
// Adopting is two halves: filing (outcomes and items into their indexes,
// nothing written) and the finish (what may write or reach other shards).
// A node may file a shard read ahead of its claim and finish it once the
// claim kept the rows it read (decisions/053); filed ahead, the items with
// `after` ids wait for the finish, so that no other shard's dependency can
// reach into a shard the node does not own.
//
// Dropping a shard forgets its items, leases, deadlines, dependencies,
// outcomes and schedules without writing anything, in steps too: the new
// owner loads them from the store. Items of other shards waiting on its ids keep their edges,
// which now name ids elsewhere (ops/remote-dependencies.ts polls them).

import { assert } from "../../lib/assert.ts";
import type { ItemRecord } from "../../storage/record.ts";
import type { ItemKey, StoredShard } from "../../storage/store.ts";
import { parseId } from "../state/ids.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import type { Topic } from "../ready/topic.ts";
import { killLoadedItems, loadItemsInSteps, loadOutcomesInSteps, type RecoveryProgress } from "./recovery.ts";

/**
 * A shard filed into the running states and not yet served: what its finish
 * still has to do (fileShardInSteps, finishShardInSteps).
 */
export interface FiledShard {
  readonly shard: number;
  /** Items held back from filing: they wait on `after` ids, which are settled only at the finish. */
  readonly held: Array<{ key: ItemKey; record: ItemRecord }>;
  /** Topics its items joined. */
  readonly touched: Set<Topic<LiveItem>>;
  /** Items found waiting on a failed dependency: killed (and written) at the finish. */
  readonly toKill: Array<{ item: LiveItem; reason: string }>;
}

/**
 * File `stored` into the running states in steps of at most
 * `recordsPerStepMax` records: its outcomes and items, placed in their
 * indexes, with nothing written. `elsewhere`: ids on shards the engine does
 * not hold (the filed shard counts as held). `ackedHeld`: the engine held
 * this shard before and may still hold its acked ends. `ahead`: the shard is
 * read ahead of its claim (decisions/053), so nothing of it may be written
 * and no other shard's item may reach into it: its items with `after` ids
 * wait for the finish. Otherwise none is held back. Until the shard serves,
 * its lease, TTL and retention deadlines wait (ItemStates.parkShard, which
 * the caller calls first).
 */
export function* fileShardInSteps(
  states: ItemStates,
  stored: StoredShard,
  nowMs: number,
  recordsPerStepMax: number,
  elsewhere: ((id: string) => boolean) | null,
  ackedHeld: boolean,
  ahead: boolean,
): Generator<RecoveryProgress, FiledShard> {
  assert(recordsPerStepMax >= 1, "shard moves: recordsPerStepMax must be at least 1");
  assert(!states.setOpen, "shard moves: adopting inside an op");
  const shard = stored.shard;
  const skipHeld = ackedHeld ? (ns: string, key: number) => states.ended.outcomeOf(ns, shard, key) !== undefined : null;
  yield* loadOutcomesInSteps(states, stored.outcomes, stored.ackedLog, nowMs, recordsPerStepMax, skipHeld);
  const filed: FiledShard = { shard, held: [], touched: new Set(), toKill: [] };
  const items = ahead ? withoutDependents(stored.items, filed.held) : stored.items;
  const toKill = yield* loadItemsInSteps(states, [{ shard, items }], nowMs, recordsPerStepMax, awayFrom(shard, elsewhere), filed.touched);
  // One at a time: a spread of a shard's worth of arguments can overflow the stack.
  for (const kill of toKill) filed.toKill.push(kill);
  assert(!states.setOpen, "shard moves: filing wrote");
  return filed;
}

/**
 * The rest of a filed shard's adoption, once it is this node's: the items
 * held back, then the dependencies of other shards' items on its ids, each
 * settled as recovery would find it (kills are written). The caller serves
 * the shard in the same turn as the last step.
 */
export function* finishShardInSteps(
  states: ItemStates,
  filed: FiledShard,
  nowMs: number,
  recordsPerStepMax: number,
  elsewhere: ((id: string) => boolean) | null,
): Generator<RecoveryProgress, void> {
  assert(!states.setOpen, "shard moves: finishing inside an op");
  if (filed.held.length > 0) {
    const toKill = yield* loadItemsInSteps(states, [{ shard: filed.shard, items: filed.held }], nowMs, recordsPerStepMax, awayFrom(filed.shard, elsewhere), filed.touched);
    for (const kill of toKill) filed.toKill.push(kill);
  }
  killLoadedItems(states, filed.toKill);
  settleDependenciesOn(states, filed.shard, nowMs);
  states.endSetBackground();
}

/** An id elsewhere, as the loader asks: on a shard the engine does not hold, not the one it loads. */
function awayFrom(shard: number, elsewhere: ((id: string) => boolean) | null): ((id: string) => boolean) | null {
  return elsewhere === null ? null : (id: string) => parseId(id)?.shard !== shard && elsewhere(id);
}

/** The stored items, less the pending ones with `after` ids (kept in `held`): a dependency could kill them, which writes. */
function* withoutDependents(
  items: Iterable<{ key: ItemKey; record: ItemRecord }>,
  held: Array<{ key: ItemKey; record: ItemRecord }>,
): Iterable<{ key: ItemKey; record: ItemRecord }> {
  for (const entry of items) {
    if (entry.record.state === "pending" && entry.record.after !== null && entry.record.after.length > 0) held.push(entry);
    else yield entry;
  }
}

/** Items of other shards waiting on ids of `shard` counted them as live elsewhere; settle each as recovery would. */
function settleDependenciesOn(states: ItemStates, shard: number, nowMs: number): void {
  if (states.graph.edgeCount === 0) return;
  const ids: string[] = [];
  for (const id of states.graph.dependencyIds()) if (parseId(id)?.shard === shard) ids.push(id);
  for (const id of ids) {
    const item = states.items.get(id);
    if (item !== undefined) {
      if (item.state === "dead") states.killDependents(id, "dead");
      continue;
    }
    const outcome = states.ended.outcomeOfId(null, id);
    // An id the store no longer knows was acked and forgotten (recovery's unknownIsSatisfied).
    if (outcome === undefined || outcome === "acked") states.dependencyAcked(id, nowMs);
    else states.killDependents(id, outcome);
  }
}

/**
 * Forget every item, outcome and dependency edge of `shard` (schedules are
 * the engine's), yielding after every `recordsPerStepMax` items: nothing is
 * written. Between steps the shard is unserved and half forgotten, which no
 * request can see (the router refuses its ids, dequeues skip it).
 */
export function* dropShardInSteps(states: ItemStates, shard: number, recordsPerStepMax: number): Generator<RecoveryProgress, void> {
  assert(recordsPerStepMax >= 1, "shard moves: recordsPerStepMax must be at least 1");
  const slots = states.items.shardSlots(shard);
  const items: LiveItem[] = [];
  if (slots !== null) for (const item of slots.items) if (item !== undefined) items.push(item);
  let done = 0;
  // Newest first: in a heap filled in order the newest items are leaves, each cut alone, where taking the oldest
  // (its root) first would pair every other item of the heap in one step (decisions/049).
  for (let at = items.length - 1; at >= 0; at--) {
    const item = items[at] as LiveItem;
    assert(!states.setOpen, "shard moves: dropping inside an op");
    // An item may have ended between steps (a lease expiry on the shard): only what is still filed goes.
    if (states.items.holds(item)) states.unloadItem(item);
    if (++done % recordsPerStepMax === 0) yield { phase: "items", done };
  }
  states.unloadOutcomes(shard);
}
