/** FNV-1a, 32 bits, over the bytes given. */
export declare function fnv1a32(bytes: Uint8Array): number;
/** The shard a keyed item lives on (when it names no group). */
export declare function shardOfKey(ns: string, topic: string, key: string, shards: number): number;
/** The shard every item of a group lives on, keyed or not. */
export declare function shardOfGroup(ns: string, topic: string, group: string, shards: number): number;
