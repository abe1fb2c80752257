// The shard a keyed item lives on in cluster mode, computed the same way by
// the nodes (src/cluster/placement.ts) and the clients that route to them, so
// a key is unique across the cluster. The hash is the contract's: fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(key)) mod
// shards, FNV-1a with offset basis 2166136261 and prime 16777619.

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
