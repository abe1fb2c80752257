/** FNV-1a, 32 bits, over the bytes given. */
export declare function fnv1a32(bytes: Uint8Array): number;
/** The shard a keyed item lives on. */
export declare function shardOfKey(ns: string, topic: string, key: string, shards: number): number;
