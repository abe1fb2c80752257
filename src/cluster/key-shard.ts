// Where cluster mode places an item that must live on a known shard: a keyed
// item on the shard its key hashes to (so the key is unique across the
// cluster: every node sends it to the same shard), an `after` item on the
// shard of its first `after` id (so its first dependency is local). The hash
// is the contract's: fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(key)) mod
// shards, FNV-1a with offset basis 2166136261 and prime 16777619.

import type { EnqueueItemInput } from "../engine/api.ts";
import type { ShardPlacement } from "../engine/enqueue.ts";
import { parseId } from "../engine/ids.ts";

const fnvOffsetBasis = 2166136261;
const fnvPrime = 16777619;
const encoder = new TextEncoder();

/** FNV-1a, 32 bits, over the bytes given. */
export function fnv1a32(bytes: Uint8Array): number {
  let hash = fnvOffsetBasis;
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i] as number;
    hash = Math.imul(hash, fnvPrime) >>> 0;
  }
  return hash >>> 0;
}

/** The shard a keyed item lives on. */
export function shardOfKey(ns: string, topic: string, key: string, shards: number): number {
  const bytes = encoder.encode(`${ns}\u0000${topic}\u0000${key}`);
  return fnv1a32(bytes) % shards;
}

/** The placement the cluster engine gives the enqueue: key first, then the first `after` id, else any shard. */
export function clusterPlacement(shards: number): ShardPlacement {
  return {
    shardFor(ns: string, input: EnqueueItemInput): number {
      if (input.key !== null) return shardOfKey(ns, input.topic, input.key, shards);
      const first = input.after?.[0];
      if (first !== undefined) {
        const parsed = parseId(first);
        if (parsed !== null && parsed.shard < shards) return parsed.shard;
      }
      return -1;
    },
  };
}
