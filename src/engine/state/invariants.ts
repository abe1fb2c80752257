// The engine's cross-index invariants, for tests (after every step of the
// model test): every live item is filed exactly where its state says, counts
// match contents, signature references match items.

import { topicKeyOf } from "../groups/group-key.ts";
import { assert } from "../../lib/assert.ts";
import { DeadlineKind } from "../time/deadlines.ts";
import { liveStateNames, type LiveStateName } from "../api.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import type { ItemStates } from "./item-states.ts";
import type { LiveItem } from "./item.ts";
import type { Topic } from "../ready/topic.ts";

export function checkEngineInvariants(states: ItemStates, deadlines: EngineDeadlines): void {
  deadlines.checkInvariants();
  states.graph.checkInvariants();
  states.items.checkInvariants();
  states.ended.checkInvariants();
  const counted = new Map<Topic<LiveItem>, Record<LiveStateName, number>>();
  const signatureRefs = new Map<number, number>();
  for (const [id, item] of states.items) {
    signatureRefs.set(item.signatureId, (signatureRefs.get(item.signatureId) ?? 0) + 1);
    assert(item.id === id, "engine: item filed under the wrong id");
    const ns = states.namespaces.get(item.ns);
    assert(ns !== undefined && ns.topics.get(item.topic.name) === item.topic, `engine: item ${id} in a dropped topic`);
    let c = counted.get(item.topic);
    if (c === undefined) {
      c = { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 };
      counted.set(item.topic, c);
    }
    c[item.state]++;
    assert(states.items.get(id) === item, `engine: item ${id} not found by its id`);
    assert((item.leaseExpiresAtMs !== null) === (item.state === "leased"), `engine: ${item.state} item ${id} has leaseExpiresAtMs ${item.leaseExpiresAtMs}`);
    switch (item.state) {
      case "ready":
        assert((item.inReadyHeap) === item.committed, `engine: ready item ${id} misfiled`);
        assert(!states.graph.isWaiting(id), `engine: ready item ${id} waits`);
        // A ready item's only deadline is the release of its hold (prefer_wait_ms), on its held signature.
        if (item.timerNode !== null) {
          assert(item.timerNode.kind === DeadlineKind.PreferRelease && item.inReadyHeap, `engine: ready item ${id} has a timer`);
          assert(states.registry.preferenceOf(item.signatureId)?.held === true, `engine: ready item ${id} has a release deadline but is not held`);
        } else if (item.inReadyHeap) {
          assert(states.registry.preferenceOf(item.signatureId)?.held !== true, `engine: ready item ${id} is held with no release deadline`);
        }
        break;
      case "delayed":
        assert(item.timerNode !== null && !item.inReadyHeap, `engine: delayed item ${id} misfiled`);
        break;
      case "waiting":
        assert(states.graph.isWaiting(id) && !item.inReadyHeap, `engine: waiting item ${id} misfiled`);
        break;
      case "leased":
        assert(item.committed && !item.inReadyHeap, `engine: leased item ${id} misfiled`);
        // A lease that ended on a parked shard waits, out of the heap, for the shard to serve (ItemStates.parkShard).
        assert(item.timerNode !== null || (states.isParked(item.shard) && item.progress !== null && item.progress.kind === DeadlineKind.Lease), `engine: leased item ${id} has no lease deadline`);
        assert(item.progress?.atMs === item.leaseExpiresAtMs, `engine: leased item ${id} deadline differs from its record`);
        break;
      case "dead":
        assert(item.topic.deadLetters.has(item) && item.timerNode === null && item.deadReason !== null, `engine: dead item ${id} misfiled`);
        break;
    }
    const key = item.idempotencyKey;
    if (key !== null) assert(item.topic.keys.get(topicKeyOf(item.group?.name ?? null, key)) === item, `engine: item ${id} lost its key`);
  }
  for (const [sig, refs] of signatureRefs) {
    if (sig !== 0) assert(states.registry.refCountOf(sig) === refs, `engine: signature ${sig} has ${states.registry.refCountOf(sig)} references, ${refs} items`);
  }
  assert(states.registry.size === signatureRefs.size - (signatureRefs.has(0) ? 1 : 0), "engine: signatures live without items");
  let topics = 0;
  for (const ns of states.namespaces.values()) {
    topics += ns.topics.size;
    for (const topic of ns.topics.values()) {
      topic.checkInvariants();
      const c = counted.get(topic) ?? (topic.pause !== null || topic.pausedGroups > 0 ? { ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0 } : undefined);
      // A paused topic, or one with a paused group, lives while empty (ops/pause.ts, groups/group-pauses.ts); any other empty topic is dropped.
      assert(c !== undefined, `engine: empty topic ${topic.name} kept`);
      for (const state of liveStateNames) {
        assert(topic[state] === c[state], `engine: topic ${topic.name} counts ${topic[state]} ${state}, holds ${c[state]}`);
      }
    }
  }
  assert(topics === states.namespaces.topicCount, `engine: ${states.namespaces.topicCount} topics counted, ${topics} found`);
}
