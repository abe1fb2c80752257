// The shard a keyed item, or an item of a group, lives on in cluster mode,
// computed the same way by the nodes (src/cluster/placement.ts) and the
// clients that route to them, so a key is unique across the cluster and a
// group's bounds hold on one shard. The hashes are the contract's:
// fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(key)) mod shards for a key,
// the same over the group's name for a group, FNV-1a with offset basis
// 2166136261 and prime 16777619.

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

/** The shard a keyed item lives on (when it names no group). */
export function shardOfKey(ns: string, topic: string, key: string, shards: number): number {
  return shardOfName(ns, topic, key, shards);
}

/** The shard every item of a group lives on, keyed or not. */
export function shardOfGroup(ns: string, topic: string, group: string, shards: number): number {
  return shardOfName(ns, topic, group, shards);
}

/**
 * The shard a schedule belongs to in cluster mode: its item's group's when
 * the item names a group (so the ticks' items share their group's shard and
 * its bounds hold there), else fnv1a32(utf8(ns) 0x00 utf8(name)) mod shards.
 * Its owner fires it, and its ticks' items live there too
 * (docs/decisions/033-schedules.md).
 */
export function shardOfSchedule(ns: string, name: string, item: { topic: string; group: string | null }, shards: number): number {
  if (item.group !== null) return shardOfGroup(ns, item.topic, item.group, shards);
  return fnv1a32(encoder.encode(`${ns}\u0000${name}`)) % shards;
}

/** fnv1a32(utf8(ns) 0x00 utf8(topic) 0x00 utf8(name)) mod shards: the one hash both rules share. */
function shardOfName(ns: string, topic: string, name: string, shards: number): number {
  const bytes = encoder.encode(`${ns}\u0000${topic}\u0000${name}`);
  return fnv1a32(bytes) % shards;
}
