import type { EnqueueItem } from "./types.ts";
/** The shard `item` lives on in a cluster of `shards` shards, or -1 when any shard will do. */
export declare function itemShard(ns: string, item: Pick<EnqueueItem, "topic" | "key" | "group" | "after">, shards: number): number;
