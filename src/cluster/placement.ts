// Where cluster mode places an item that must live on a known shard: an item
// of a group on the shard its group hashes to (protocol/key-shard.ts: every
// node and client computes the same one, so a group's items share a shard
// and its bounds hold there exactly), a keyed item on the shard its key
// hashes to (so the key is unique across the cluster), an `after` item on
// the shard of its first `after` id (so that dependency is local). The group
// comes first: a keyed item of a group follows its group (its key is unique
// within the group, on the group's shard), and an `after` item of a group
// waits on a dependency elsewhere through the engine's remote dependencies.
// A keyed item with `after` follows its key.

import type { EnqueueItemInput } from "../engine/api.ts";
import type { ScheduleItemPlace, ShardPlacement } from "../engine/ops/enqueue.ts";
import { parseId } from "../lib/id-grammar.ts";
import { shardOfGroup, shardOfKey, shardOfSchedule } from "../protocol/key-shard.ts";

/**
 * The placement the cluster engine gives the enqueue: group first, then key,
 * then the first `after` id, else any shard. `local` says which shards this node's
 * engine holds; an id on any other is elsewhere.
 */
export function clusterPlacement(shards: number, local: (shard: number) => boolean): ShardPlacement {
  return {
    elsewhere(id: string): boolean {
      const parsed = parseId(id);
      return parsed !== null && parsed.shard < shards && !local(parsed.shard);
    },
    shardFor(ns: string, input: EnqueueItemInput): number {
      const group = input.group ?? null;
      if (group !== null) return shardOfGroup(ns, input.topic, group, shards);
      if (input.key !== null) return shardOfKey(ns, input.topic, input.key, shards);
      const first = input.after?.[0];
      if (first !== undefined) {
        const parsed = parseId(first);
        if (parsed !== null && parsed.shard < shards) return parsed.shard;
      }
      return -1;
    },
    // A schedule's ticks are keyed items that live on the schedule's shard, not their key's: each tick's key is
    // new, and one shard for all of them lets the owner that fires them write the item and the schedule's last
    // tick in one fenced transaction. A schedule whose item names a group lives on that group's shard, so the
    // group's items stay on one shard as every grouped item does.
    scheduleShard(ns: string, name: string, item: ScheduleItemPlace): number {
      return shardOfSchedule(ns, name, item, shards);
    },
  };
}
