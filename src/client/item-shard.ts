// Where the cluster client sends an item to enqueue: the shard the contract
// places it on, so the node that owns that shard takes it without a MOVED.
// A grouped item lives on its group's shard, so one node holds every item of
// a group and can keep the group's bounds exactly; that rule comes first. A
// keyed item lives on its key's shard, so the key is unique across the
// cluster; an item with `after` on its first dependency's shard; any other
// item on any shard (-1: the caller picks a node).

import { shardOfIdOrReceipt } from "../lib/id-grammar.ts";
import { shardOfGroup, shardOfKey } from "../protocol/key-shard.ts";
import type { EnqueueItem } from "./types.ts";

/** The shard `item` lives on in a cluster of `shards` shards, or -1 when any shard will do. */
export function itemShard(ns: string, item: Pick<EnqueueItem, "topic" | "key" | "group" | "after">, shards: number): number {
  if (item.group !== undefined && item.group !== null) return shardOfGroup(ns, item.topic, item.group, shards);
  if (item.key !== undefined && item.key !== null) return shardOfKey(ns, item.topic, item.key, shards);
  const first = item.after?.[0];
  return first === undefined ? -1 : (shardOfIdOrReceipt(first) ?? -1);
}
