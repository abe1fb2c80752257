/** FNV-1a, 32 bits, over the bytes given. */
export declare function fnv1a32(bytes: Uint8Array): number;
/** The shard a keyed item lives on (when it names no group). */
export declare function shardOfKey(ns: string, topic: string, key: string, shards: number): number;
/** The shard every item of a group lives on, keyed or not. */
export declare function shardOfGroup(ns: string, topic: string, group: string, shards: number): number;
/**
 * The shard a schedule belongs to in cluster mode: its item's group's when
 * the item names a group (so the ticks' items share their group's shard and
 * its bounds hold there), else fnv1a32(utf8(ns) 0x00 utf8(name)) mod shards.
 * Its owner fires it, and its ticks' items live there too
 * (docs/decisions/033-schedules.md).
 */
export declare function shardOfSchedule(ns: string, name: string, item: {
    topic: string;
    group: string | null;
}, shards: number): number;
