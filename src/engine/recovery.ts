// Start-up: rebuild every in-memory index from what the store holds. Items
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

import { assert } from "../lib/assert.ts";
import type { Store } from "../storage/store.ts";
import { Deadline, DeadlineKind } from "./deadlines.ts";
import { classifyAfter, type DependencyStatus } from "./dependencies.ts";
import { parseId } from "./ids.ts";
import { LiveItem } from "./item.ts";
import type { ItemStates } from "./item-states.ts";
import { RetainedOutcome } from "./outcome-table.ts";
import { parseRequires, type Requires, signatureRegistryFull } from "./matching/index.ts";

/** Where recovery stands after a step: the phase it is in and how many records of that phase are done. */
export interface RecoveryProgress {
  /** "outcomes": retained outcomes read; "items": stored items read; "index": items filed into states, heaps and dependencies. */
  phase: "outcomes" | "items" | "index";
  /** Records of this phase done so far. */
  done: number;
}

/**
 * Recover, yielding the progress after every `recordsPerTurnMax` records of a phase; done when the generator returns.
 * `elsewhere`: cluster mode's test for an id on another node's shard, which counts as a live dependency (remote-dependencies.ts).
 */
export function* loadStoreInSteps(
  states: ItemStates,
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
    states.ended.restore(new RetainedOutcome(parsed.shard, parsed.key, record.ns, record.outcome, record.endedAtMs));
    if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
  }
  // The acked log, oldest first; records past the retention are skipped and purged.
  const cutoffMs = nowMs - states.limits.outcomeRetentionMs;
  let stale = false;
  for (const record of store.loadAckedLog()) {
    if (record.endedAtMs <= cutoffMs) {
      stale = true;
      continue;
    }
    for (let i = 0; i < record.keys.length; i++) {
      states.ended.restoreAcked(record.namespaces[record.nsIndexes[i] as number] as string, record.keys[i] as number, record.endedAtMs);
      if (++outcomesDone % recordsPerTurnMax === 0) yield { phase: "outcomes", done: outcomesDone };
    }
  }
  if (stale) states.ws().purgeAckedBefore(cutoffMs + 1);
  const loaded: LiveItem[] = [];
  for (const shard of store.loadShards({ bytes: false })) {
    for (const { key, record } of shard.items) {
      let requires: Requires | null = null;
      if (record.requires !== null) {
        const r = parseRequires(record.requires, states.limits);
        assert(r.ok, `stored item ${shard.shard}:${key} has invalid requires`);
        requires = r.value;
      }
      const sig = states.registry.intern(requires);
      assert(sig !== signatureRegistryFull, "recovery: more stored signatures than signaturesMax");
      const topic = states.namespace(record.ns, nowMs).topic(record.topic);
      topic.joinGroup(sig);
      // Until the second pass files it, the state says only whether the store holds a dead letter
      // (a dependency lookup reads that); "leased" is kept too, as the second pass needs it.
      const state = record.state === "pending" ? "ready" : record.state;
      const item = new LiveItem(shard.shard, key, topic, sig, record, states.settings.forRecord(record), state, null);
      states.items.add(item);
      if (record.key !== null) topic.keys.set(record.key, item);
      loaded.push(item);
      if (loaded.length % recordsPerTurnMax === 0) yield { phase: "items", done: loaded.length };
    }
  }
  // Second pass, once every item is known: states, dependencies, deadlines.
  // Stored dead letters are the only items in state "dead" until the kills at the end.
  const toKill: Array<{ item: LiveItem; reason: string }> = [];
  const lookup = (id: string): DependencyStatus => {
    const dep = states.items.get(id);
    if (dep !== undefined) return dep.state === "dead" ? "dead" : "live";
    const outcome = states.ended.outcomeOfId(null, id);
    if (outcome !== undefined) return outcome;
    return elsewhere !== null && elsewhere(id) ? "live" : "unknown";
  };
  let indexed = 0;
  for (const item of loaded) {
    if (item.state === "dead") {
      states.enter(item, "dead");
      item.topic.deadLetters.add(item);
    } else if (item.state === "leased") {
      states.enter(item, "leased");
      // A lease that ended while the server was down expires at the first tick.
      states.deadlines.scheduleNode(item.idleTimer(), item.leaseExpiresAtMs ?? nowMs, DeadlineKind.Lease);
    } else {
      const after = item.after;
      if (after === null) {
        states.placePending(item, nowMs);
      } else {
        const c = classifyAfter(after, lookup, Number.MAX_SAFE_INTEGER, { unknownIsSatisfied: true });
        if (c.kind === "waiting") states.graph.addWaiting(item.id, c.unmet);
        states.placePending(item, nowMs);
        if (c.kind === "dead") toKill.push({ item, reason: c.deadReason });
      }
    }
    const ttlExpiresAtMs = item.ttlExpiresAtMs;
    if (ttlExpiresAtMs !== null) item.ensureExtras().ttlNode = states.deadlines.schedule(new Deadline(ttlExpiresAtMs, DeadlineKind.Ttl, item));
    if (++indexed % recordsPerTurnMax === 0) yield { phase: "index", done: indexed };
  }
  for (const { item, reason } of toKill) if (states.items.holds(item) && item.state !== "dead") states.killItem(item, reason);
  states.endSetBackground();
  states.dirty.clear();
}
