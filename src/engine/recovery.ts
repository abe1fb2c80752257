// Start-up: rebuild every in-memory index from what the store holds. Items
// load in two passes (dependencies can name any stored item); leases that
// ended while the server was down, TTLs and retention that passed, are left
// as due deadlines for the first tick. An empty store is a fresh start.

import { assert } from "../lib/assert.ts";
import type { Store } from "../storage/store.ts";
import { DeadlineKind } from "./deadlines.ts";
import { classifyAfter, type DependencyStatus } from "./dependencies.ts";
import { formatId } from "./ids.ts";
import { LiveItem } from "./item.ts";
import type { ItemStates } from "./item-states.ts";
import { parseRequires, type Requires, signatureRegistryFull } from "./matching/index.ts";

export function loadStore(s: ItemStates, store: Store, nowMs: number): void {
  for (const { id, record } of store.loadOutcomes()) {
    const node = s.deadlines.schedule(record.endedAtMs + s.limits.outcomeRetentionMs, DeadlineKind.OutcomeRetention, null, null, id);
    s.outcomes.set(id, { record, node });
  }
  const loaded: LiveItem[] = [];
  for (const shard of store.loadShards()) {
    for (const { key, record } of shard.items) {
      let requires: Requires | null = null;
      if (record.requires !== null) {
        const r = parseRequires(record.requires, "requires", s.limits);
        assert(r.ok, `stored item ${shard.shard}:${key} has invalid requires`);
        requires = r.value;
      }
      const sig = s.registry.intern(requires);
      assert(sig !== signatureRegistryFull, "recovery: more stored signatures than signaturesMax");
      const topic = s.namespace(record.ns, nowMs).topic(record.topic);
      topic.joinGroup(sig);
      const item = new LiveItem(formatId(shard.shard, key), shard.shard, key, record, topic, sig, "ready", true);
      s.items.set(item.id, item);
      if (record.key !== null) topic.keys.set(record.key, item);
      loaded.push(item);
    }
  }
  // Second pass, once every item is known: states, dependencies, deadlines.
  const toKill: Array<{ item: LiveItem; reason: string }> = [];
  const lookup = (id: string): DependencyStatus => {
    const dep = s.items.get(id);
    if (dep !== undefined) return dep.record.state === "dead" ? "dead" : "live";
    return s.outcomes.get(id)?.record.outcome ?? "unknown";
  };
  for (const item of loaded) {
    const record = item.record;
    if (record.state === "dead") {
      s.enter(item, "dead");
      item.topic.deadLetters.add(item);
    } else if (record.state === "leased") {
      s.enter(item, "leased");
      // A lease that ended while the server was down expires at the first tick.
      item.timerNode = s.deadlines.schedule(record.leaseExpiresAtMs ?? nowMs, DeadlineKind.Lease, item, null, null);
    } else {
      const c = classifyAfter(record.after, lookup, Number.MAX_SAFE_INTEGER, { unknownIsSatisfied: true });
      if (c.kind === "waiting") s.graph.addWaiting(item.id, c.unmet);
      s.placePending(item, nowMs);
      if (c.kind === "dead") toKill.push({ item, reason: c.deadReason });
    }
    if (record.ttlExpiresAtMs !== null) item.ttlNode = s.deadlines.schedule(record.ttlExpiresAtMs, DeadlineKind.Ttl, item, null, null);
  }
  for (const { item, reason } of toKill) if (s.items.get(item.id) === item && item.state !== "dead") s.killItem(item, reason);
  s.endSetBackground();
  s.dirty.clear();
}
